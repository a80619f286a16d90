"""The real-money switch (`REAL_MONEY`: on, off or restricted) and the players' regions.

`restricted` offers real money only to players whose region (an Indian state or union territory
code, from KYC or a deposit) is known and not in `REAL_MONEY_BLOCKED_REGIONS`: where the law
may forbid it, an unknown region fails closed. When real money is unavailable to a player, no
cash game opens with them and they cannot deposit; withdrawals, wallet reads and chips games
always work, and games already open settle normally. Nobody's balance is touched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from wallets.errors import RealMoneyUnavailable
from wallets.models import Player, ProtectionChange

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
    return next((r for r in DEMO_REGIONS if r not in settings.REAL_MONEY_BLOCKED_REGIONS), "")


def real_money_for(*, player: Player) -> Availability:
    here = real_money_here()
    if not here.available or settings.REAL_MONEY == ON:
        return here
    if not player.region:
        return Availability(False, "the player's region is unknown (real money is restricted)")
    if player.region in settings.REAL_MONEY_BLOCKED_REGIONS:
        return Availability(False, f"real money is not offered in region {player.region}")
    return Availability(True)


def without_real_money() -> Q | None:
    """The players real money is unavailable to, as a filter on players (None: nobody); the
    same rule as `real_money_for`, for many players at once."""
    if settings.REAL_MONEY == OFF:
        return Q()
    if settings.REAL_MONEY == RESTRICTED:
        return Q(region="") | Q(region__in=list(settings.REAL_MONEY_BLOCKED_REGIONS))
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


def region_set(*, player: Player, region: str, changed_by: str) -> None:
    """Record the player's region (history kept), when it changes."""
    if not re.fullmatch(REGION_PATTERN, region):
        raise ValueError(f"a region is two capital letters, not {region!r}")
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
