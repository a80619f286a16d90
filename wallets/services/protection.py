"""Player protection: daily and monthly deposit limits, self-exclusion, and their history.

Every change is a `ProtectionChange` row (who, when, old and new value, from when it counts);
the state is derived from the rows, so the history cannot disagree with it:
- a lower (or equal) limit counts at once; a higher one, or none, only after
  `DEPOSIT_LIMIT_RAISE_DELAY_HOURS`; any later change overtakes a raise still waiting;
- a self-exclusion lasts until the latest end ever set (or for good): nothing shortens it, so
  nobody (finance included) can lift one early.
Deposits check both under the player's row lock (`deposit_register`), so concurrent deposits
cannot together pass a limit.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from wallets.errors import DepositLimitReached, SelfExcluded
from wallets.models import Account, Bucket, Entry, Player, ProtectionChange, Transfer
from wallets.money.amounts import amount_text
from wallets.services.players import player_lock

Kind = ProtectionChange.Kind
PERMANENT = "permanent"
LIMIT_KINDS = (Kind.DAILY_LIMIT, Kind.MONTHLY_LIMIT)


@dataclass(frozen=True)
class PendingLimit:
    kind: str
    limit: Decimal | None
    effective_at: datetime


@dataclass(frozen=True)
class Protection:
    daily_limit: Decimal | None
    monthly_limit: Decimal | None
    pending: tuple[PendingLimit, ...]
    excluded_until: datetime | None
    excluded_permanently: bool

    @property
    def limits(self) -> dict[str, Decimal | None]:
        return {Kind.DAILY_LIMIT: self.daily_limit, Kind.MONTHLY_LIMIT: self.monthly_limit}

    def excluded_at(self, now: datetime) -> bool:
        return _excluded_at(self.excluded_until, self.excluded_permanently, now)


def _excluded_at(until: datetime | None, permanent: bool, now: datetime) -> bool:
    return permanent or (until is not None and until > now)


def _limit(value: str) -> Decimal | None:
    return Decimal(value) if value else None


def _text(limit: Decimal | None) -> str:
    return "" if limit is None else amount_text(limit)


def protection_of(*, player: Player, now: datetime | None = None) -> Protection:
    """The player's limits and self-exclusion as they stand at `now`."""
    now = now or timezone.now()
    current: dict[str, Decimal | None] = dict.fromkeys(LIMIT_KINDS)
    pending: dict[str, ProtectionChange] = {}
    exclusions: list[str] = []
    for row in ProtectionChange.objects.filter(player=player).order_by("pk"):
        if row.kind in LIMIT_KINDS:
            waiting = pending.pop(row.kind, None)
            if waiting is not None and waiting.effective_at <= row.created_at:
                current[row.kind] = _limit(waiting.new_value)
            if row.effective_at <= row.created_at:
                current[row.kind] = _limit(row.new_value)
            else:
                pending[row.kind] = row
        elif row.kind == Kind.SELF_EXCLUSION:
            exclusions.append(row.new_value)
    for kind, row in list(pending.items()):
        if row.effective_at <= now:
            current[kind] = _limit(pending.pop(kind).new_value)
    until, permanent = _exclusion(exclusions)
    return Protection(
        daily_limit=current[Kind.DAILY_LIMIT],
        monthly_limit=current[Kind.MONTHLY_LIMIT],
        pending=tuple(
            PendingLimit(kind, _limit(row.new_value), row.effective_at)
            for kind, row in sorted(pending.items())
        ),
        excluded_until=until,
        excluded_permanently=permanent,
    )


@transaction.atomic
def limits_set(
    *,
    player_external_id: str,
    daily_limit: Decimal | None,
    monthly_limit: Decimal | None,
    changed_by: str,
) -> Protection:
    """Set both deposit limits (None: no limit): a lower one counts at once, a higher one after
    the delay."""
    player = player_lock(external_id=player_external_id, create=True)
    now = timezone.now()
    before = protection_of(player=player, now=now)
    waiting = {p.kind for p in before.pending}
    delay = timedelta(hours=settings.DEPOSIT_LIMIT_RAISE_DELAY_HOURS)
    for kind, wanted in ((Kind.DAILY_LIMIT, daily_limit), (Kind.MONTHLY_LIMIT, monthly_limit)):
        current = before.limits[kind]
        if wanted == current and kind not in waiting:
            continue
        lower = current is None or (wanted is not None and wanted <= current)
        ProtectionChange.objects.create(
            player=player,
            kind=kind,
            old_value=_text(current),
            new_value=_text(wanted),
            effective_at=now if lower else now + delay,
            changed_by=changed_by,
            created_at=now,
        )
    return protection_of(player=player, now=now)


@transaction.atomic
def self_exclusion_start(
    *, player_external_id: str, days: int | None, changed_by: str
) -> Protection:
    """Exclude the player for `days`, or for good (None). An exclusion already running is never
    shortened: the longer end stands."""
    player = player_lock(external_id=player_external_id, create=True)
    now = timezone.now()
    before = protection_of(player=player, now=now)
    if before.excluded_permanently:
        old = PERMANENT
    elif before.excluded_until is not None and before.excluded_until > now:
        old = before.excluded_until.isoformat()
    else:
        old = ""
    ProtectionChange.objects.create(
        player=player,
        kind=Kind.SELF_EXCLUSION,
        old_value=old,
        new_value=PERMANENT if days is None else (now + timedelta(days=days)).isoformat(),
        effective_at=now,
        changed_by=changed_by,
        created_at=now,
    )
    return protection_of(player=player, now=now)


def _exclusion(values: list[str]) -> tuple[datetime | None, bool]:
    """(until, permanent) from a player's self-exclusion values, in the order they were set:
    the latest end ever set, or for good."""
    ends = [datetime.fromisoformat(v) for v in values if v != PERMANENT]
    return (max(ends) if ends else None), PERMANENT in values


def self_exclusion_check(
    *,
    players: list[Player],
    now: datetime | None = None,
    values: dict[int, list[str]] | None = None,
) -> None:
    """Refuse when any of `players` is self-excluded now, naming each and until when (one
    query for the whole table; none when the caller read their self-exclusion `values`, player
    pk -> new values in the order set, with something else)."""
    now = now or timezone.now()
    if values is None:
        values = defaultdict(list)
        rows = ProtectionChange.objects.filter(player__in=players, kind=Kind.SELF_EXCLUSION)
        for player_id, value in rows.order_by("pk").values_list("player_id", "new_value"):
            values[player_id].append(value)
    values = defaultdict(list, values)
    _refuse_excluded([(player, *_exclusion(values[player.pk])) for player in players], now)


def self_excluded_of(*, player_ids: list[int], now: datetime | None = None) -> set[int]:
    """Which of these players (pks) are self-excluded at `now` (one query): a promotions'
    prize skips them."""
    now = now or timezone.now()
    values: dict[int, list[str]] = defaultdict(list)
    rows = ProtectionChange.objects.filter(player_id__in=player_ids, kind=Kind.SELF_EXCLUSION)
    for player_id, value in rows.order_by("pk").values_list("player_id", "new_value"):
        values[player_id].append(value)
    return {pk for pk, v in values.items() if _excluded_at(*_exclusion(v), now)}


def _refuse_excluded(exclusions: list[tuple[Player, datetime | None, bool]], now: datetime) -> None:
    """Raise SelfExcluded naming each (player, until, permanently) excluded at `now`."""
    excluded = [
        {"player": player.external_id, "until": None if permanent else until.isoformat()}
        for player, until, permanent in exclusions
        if _excluded_at(until, permanent, now)
    ]
    if excluded:
        names = ", ".join(
            f"{e['player']} ({'permanently' if e['until'] is None else 'until ' + e['until']})"
            for e in excluded
        )
        raise SelfExcluded(f"self-excluded: {names}", details={"players": excluded})


def deposit_allowed(*, player: Player, amount: Decimal, now: datetime | None = None) -> None:
    """Refuse a deposit by a self-excluded player, or one over a deposit limit (the caller
    holds the player's row lock, so what was deposited cannot change meanwhile)."""
    now = now or timezone.now()
    state = protection_of(player=player, now=now)
    _refuse_excluded([(player, state.excluded_until, state.excluded_permanently)], now)
    local = timezone.localtime(now)
    day = local.replace(hour=0, minute=0, second=0, microsecond=0)
    periods = (
        (Kind.DAILY_LIMIT, "daily", day),
        (Kind.MONTHLY_LIMIT, "monthly", day.replace(day=1)),
    )
    for kind, name, start in periods:
        limit = state.limits[kind]
        if limit is None:
            continue
        used = deposited_since(player=player, start=start)
        if used + amount > limit:
            left = max(limit - used, Decimal("0.00"))
            raise DepositLimitReached(
                f"this deposit passes the {name} deposit limit of {amount_text(limit)}: "
                f"{amount_text(left)} is left until the {name} period ends",
                details={
                    "limit": name,
                    "amount": amount_text(limit),
                    "deposited": amount_text(used),
                    "left": amount_text(left),
                },
            )


def deposited_since(*, player: Player, start: datetime) -> Decimal:
    """What the player paid in deposits (GST included) since `start`."""
    deposit = Account.objects.get(player=player, bucket=Bucket.DEPOSIT, kind=Account.Kind.PLAYER)
    paid = Entry.objects.filter(
        transfer__kind=Transfer.Kind.DEPOSIT,
        transfer__entries__account=deposit,
        amount__lt=0,
        created_at__gte=start,
    )
    return -(paid.aggregate(total=Sum("amount"))["total"] or Decimal("0.00"))
