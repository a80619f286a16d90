"""The real-money switch (`REAL_MONEY`: on, off or restricted) and the players' regions.

`restricted` offers real money only to players whose region (an Indian state or union territory
code, `wallets.services.regions`, from KYC or a deposit) is known and not in
`REAL_MONEY_BLOCKED_REGIONS`: where the law may forbid it, an unknown region fails closed. A
player's region is the most restrictive one reported: a report of an open region never replaces a
blocked one (finance can, in admin), and a report of a blocked region is kept even when the request
that carried it is refused. Every change is a `ProtectionChange` row. When real money is
unavailable to a player, no cash game opens with them and they cannot deposit; withdrawals, wallet
reads and chips games always work, and games already open settle normally. Nobody's balance is
touched.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from wallets.errors import PermissionRefused, RealMoneyUnavailable, RegionInvalid
from wallets.models import Player, ProtectionChange
from wallets.services.players import player_lock
from wallets.services.regions import ALIASES, UnknownRegion, region_current

ON, OFF, RESTRICTED = "on", "off", "restricted"
REGION_PATTERN = r"[A-Z]{2}"  # ISO 3166-2:IN subdivision code without the IN- prefix


@dataclass(frozen=True)
class Availability:
    available: bool
    reason: str | None = None


def real_money_here() -> Availability:
    """Whether this deployment offers real money at all (restricted: to some players)."""
    if settings.REAL_MONEY == OFF:
        return Availability(False, "real money is switched off on this platform")
    return Availability(True)


# Demo data and the simulator give their players the first of these regions that is open.
DEMO_REGIONS = ("KA", "MH", "DL", "WB", "GJ", "RJ", "KL", "HR", "PB", "UP")


def demo_region() -> str:
    """A region real money is offered in, for demo players: "" when real money is on (no region
    needed) or off (none is open), or when every demo region is blocked."""
    if settings.REAL_MONEY != RESTRICTED:
        return ""
    return next((r for r in DEMO_REGIONS if r not in blocked_regions()), "")


def blocked_regions() -> frozenset[str]:
    """`REAL_MONEY_BLOCKED_REGIONS` in current codes: a retired code blocks its successor (the
    system check `wallets.checks` refuses codes that are no region at all)."""
    return frozenset(ALIASES.get(code, code) for code in settings.REAL_MONEY_BLOCKED_REGIONS)


def real_money_for(*, player: Player) -> Availability:
    here = real_money_here()
    if not here.available or settings.REAL_MONEY == ON:
        return here
    if not player.region:
        return Availability(False, "the player's region is unknown (real money is restricted)")
    if player.region in blocked_regions():
        return Availability(False, f"real money is not offered in region {player.region}")
    return Availability(True)


def without_real_money() -> Q | None:
    """The players real money is unavailable to, as a filter on players (None: nobody); the
    same rule as `real_money_for`, for many players at once."""
    if settings.REAL_MONEY == OFF:
        return Q()
    if settings.REAL_MONEY == RESTRICTED:
        return Q(region="") | Q(region__in=sorted(blocked_regions()))
    return None


def real_money_check(*, players: list[Player]) -> None:
    """Refuse when real money is unavailable to any of `players`, naming each and why."""
    refused = [
        {"player": p.external_id, "reason": status.reason}
        for p in players
        if not (status := real_money_for(player=p)).available
    ]
    if refused:
        names = "; ".join(f"{r['player']}: {r['reason']}" for r in refused)
        raise RealMoneyUnavailable(
            f"real money is unavailable to {names}", details={"players": refused}
        )


def region_checked(region: str) -> str:
    """The current code of a reported region, or `RegionInvalid` (a 400) for anything else."""
    try:
        return region_current(region)
    except UnknownRegion as exc:
        raise RegionInvalid(str(exc), details={"region": region}) from exc


def region_report(*, player: Player, region: str, changed_by: str) -> None:
    """A region the payment gateway reported (the caller holds the player's row lock). The
    player's region becomes the most restrictive one reported: a blocked region is replaced
    only by another blocked one, or by finance (`region_set_by_finance`); between open regions
    the newest report counts."""
    region = region_checked(region)
    blocked = blocked_regions()
    if player.region in blocked and region not in blocked:
        return
    _region_change(player, region, changed_by)


def region_report_kept(*, player_external_id: str, region: str, changed_by: str) -> None:
    """The deliberate exception to "a refusal writes nothing": a report of a blocked region is
    recorded in a transaction of its own, committed before the request that carried it runs,
    so refusing that request (a deposit by a player now blocked) cannot roll it back and the
    next cash game cannot open. Anything else is left to the request itself."""
    try:
        if region_current(region) not in blocked_regions():
            return
    except UnknownRegion:
        return  # the request refuses it (region_invalid), writing nothing
    with transaction.atomic():
        player = player_lock(external_id=player_external_id, create=True)
        region_report(player=player, region=region, changed_by=changed_by)


@transaction.atomic
def region_set_by_finance(*, player_id: int, region: str, set_by: AbstractBaseUser) -> Player:
    """Finance sets a player's region (e.g. after checking a player's address): the one way a
    blocked region is replaced by an open one."""
    if not set_by.has_perm("wallets.set_player_region"):
        raise PermissionRefused("you lack the permission wallets.set_player_region")
    player = Player.objects.select_for_update(no_key=True).get(pk=player_id)
    _region_change(player, region_checked(region), f"{set_by.get_username()} (finance)")
    return player


def _region_change(player: Player, region: str, changed_by: str) -> None:
    """Record the player's region (history kept), when it changes."""
    if player.region == region:
        return
    now = timezone.now()
    ProtectionChange.objects.create(
        player=player,
        kind=ProtectionChange.Kind.REGION,
        old_value=player.region,
        new_value=region,
        effective_at=now,
        changed_by=changed_by,
        created_at=now,
    )
    player.region = region
    player.save(update_fields=["region"])
