"""TDS on net winnings (s.194BA, Rule 133) from the ledger: a player's position in a financial
year, and the year end that taxes what is left.

The reading implemented (docs/money-and-tax.md, "TDS"): per player and financial year (1 April -
31 March, Asia/Kolkata),
- deposits = what deposit transfers credited to the deposit bucket in the year (net of GST;
  a reversed deposit takes its credit back);
- opening = deposit + winnings at the year's start (bonus and pending withdrawals excluded);
  once the previous year was closed, its carry-forward (closing - TDS withheld at its end);
- withdrawals = the amounts of the year's withdrawals that were not rejected and did not fail;
- already taxed = the net winnings taxed at those withdrawals.
The formulas themselves are pure: `wallets.tax.formulas`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q, Sum
from django.utils import timezone
from djmoney.money import Money

from wallets import references
from wallets.errors import FinancialYearInvalid, FinancialYearOpen, InsufficientFunds, LedgerBusy
from wallets.models import (
    CASH,
    Account,
    Bucket,
    Entry,
    PlatformAccount,
    Player,
    TdsYearEnd,
    Transfer,
    Withdrawal,
)
from wallets.money.amounts import ZERO
from wallets.services.accounts import platform_accounts, player_accounts
from wallets.services.balances import balances_at
from wallets.services.players import player_lock
from wallets.services.transfers import Leg, transfer_post
from wallets.tax import formulas

BALANCE_BUCKETS = (Bucket.DEPOSIT, Bucket.WINNINGS)  # what Rule 133 calls the account balance


def tds_rate() -> Decimal:
    return Decimal(settings.TDS_RATE_PERCENT)


@dataclass(frozen=True)
class TaxPosition:
    player_id: int
    fy: formulas.FinancialYear
    opening: Decimal
    deposits: Decimal
    withdrawals: Decimal
    withdrawal_count: int
    taxed_net_winnings: Decimal  # at withdrawals, and at the year end once it is closed
    tds: Decimal  # withheld at withdrawals, and at the year end
    year_end: TdsYearEnd | None

    @property
    def untaxed(self) -> Decimal:
        """(withdrawals) - (deposits + opening) - taxed: what the next withdrawal starts from."""
        return self.withdrawals - (self.deposits + self.opening) - self.taxed_net_winnings


def tax_positions(
    *, player_ids: Iterable[int], fy: formulas.FinancialYear, until: datetime | None = None
) -> dict[int, TaxPosition]:
    """The positions of many players in one year (a few grouped queries, whatever their number):
    everything in [fy.start, until), `until` being the year's end unless given."""
    ids = sorted(set(player_ids))
    until = min(until or fy.end, fy.end)
    openings = _openings(ids, fy)
    deposits = _deposits(ids, fy.start, until)
    withdrawals = _withdrawals(ids, fy.start, until)
    year_ends = {y.player_id: y for y in TdsYearEnd.objects.filter(player_id__in=ids, fy=fy.label)}
    out = {}
    for pk in ids:
        w = withdrawals.get(pk, {})
        year_end = year_ends.get(pk)
        out[pk] = TaxPosition(
            player_id=pk,
            fy=fy,
            opening=openings.get(pk, ZERO),
            deposits=deposits.get(pk, ZERO),
            withdrawals=w.get("amount") or ZERO,
            withdrawal_count=w.get("n") or 0,
            taxed_net_winnings=(w.get("taxed") or ZERO)
            + (year_end.net_winnings if year_end and year_end.tds else ZERO),
            tds=(w.get("tds") or ZERO) + (year_end.withheld if year_end else ZERO),
            year_end=year_end,
        )
    return out


def tax_position(*, player: Player, fy: formulas.FinancialYear) -> TaxPosition:
    return tax_positions(player_ids=[player.pk], fy=fy)[player.pk]


def _per_player(entries, total: str = "amount") -> dict[int, Decimal]:
    rows = entries.values("account__player_id").annotate(total=Sum(total)).order_by()
    return {row["account__player_id"]: row["total"] for row in rows}


def players_balances_at(ids: list[int], moment: datetime) -> dict[int, Decimal]:
    """Deposit + winnings of each player at a moment (`wallets.services.balances`: the last
    close before it and the entries since)."""
    accounts = dict(
        Account.objects.filter(
            player_id__in=ids, kind=Account.Kind.PLAYER, bucket__in=BALANCE_BUCKETS
        ).values_list("pk", "player_id")
    )
    out: dict[int, Decimal] = {}
    for account_id, amount in balances_at(accounts=accounts, moment=moment).items():
        out[accounts[account_id]] = out.get(accounts[account_id], ZERO) + amount
    return out


def _openings(ids: list[int], fy: formulas.FinancialYear) -> dict[int, Decimal]:
    carried = dict(
        TdsYearEnd.objects.filter(player_id__in=ids, fy=fy.previous().label).values_list(
            "player_id", "carry_forward"
        )
    )
    rest = [pk for pk in ids if pk not in carried]
    return {**players_balances_at(rest, fy.start), **carried} if rest else carried


def _deposits(ids: list[int], start: datetime, until: datetime) -> dict[int, Decimal]:
    entries = Entry.objects.filter(
        account__player_id__in=ids,
        account__kind=Account.Kind.PLAYER,
        account__bucket=Bucket.DEPOSIT,
        created_at__gte=start,
        created_at__lt=until,
    ).filter(
        Q(transfer__kind=Transfer.Kind.DEPOSIT) | Q(transfer__reverses__kind=Transfer.Kind.DEPOSIT)
    )
    return _per_player(entries)


def _withdrawals(ids: list[int], start: datetime, until: datetime) -> dict[int, dict]:
    rows = (
        Withdrawal.objects.filter(
            player_id__in=ids,
            status__in=Withdrawal.COUNTED,
            requested_at__gte=start,
            requested_at__lt=until,
        )
        .values("player_id")
        .annotate(
            amount=Sum("amount"), taxed=Sum("taxed_net_winnings"), tds=Sum("tds"), n=Count("id")
        )
        .order_by()
    )
    return {row["player_id"]: row for row in rows}


# --- the year end -------------------------------------------------------------------------------


@dataclass
class YearEndRun:
    fy: str
    as_of: datetime
    closed: int = 0  # players closed now
    already: int = 0  # closed by an earlier run
    tds: Decimal = ZERO
    withheld: Decimal = ZERO
    busy: list[str] = field(default_factory=list)  # left for the next run (a lock, a race)


def tds_year_end(*, fy: formulas.FinancialYear, as_of: datetime | None = None) -> YearEndRun:
    """Close a financial year for every player with a balance or movements in it: Rule 133's
    year-end TDS, withheld now, recorded once per player (`TdsYearEnd`, unique, and one ledger
    key). Each player is closed in a transaction of their own, so an interrupted run is
    finished by running it again. `as_of` (tests) closes the year at an earlier moment."""
    as_of = as_of or fy.end
    if not fy.start < as_of <= fy.end:
        raise FinancialYearInvalid(f"{as_of} is not within the financial year {fy.label}")
    if as_of > timezone.now():
        raise FinancialYearOpen(
            f"the financial year {fy.label} ends at {fy.end.isoformat()}: it cannot be closed "
            "before then (--as-of closes it at an earlier moment, for tests)"
        )
    run = YearEndRun(fy=fy.label, as_of=as_of)
    closed_before = TdsYearEnd.objects.filter(fy=fy.label).values("player_id")
    candidates = (
        Account.objects.filter(
            kind=Account.Kind.PLAYER, bucket__in=BALANCE_BUCKETS, entries__created_at__lt=as_of
        )
        .exclude(player_id__in=closed_before)
        .values_list("player__external_id", flat=True)
        .distinct()
        .order_by("player__external_id")
    )
    run.already = TdsYearEnd.objects.filter(fy=fy.label).count()
    for external_id in list(candidates):
        try:
            record = _player_year_end(external_id=external_id, fy=fy, as_of=as_of)
        except (LedgerBusy, InsufficientFunds):  # the player played meanwhile: next run
            run.busy.append(external_id)
            continue
        if record is not None:
            run.closed += 1
            run.tds += record.tds
            run.withheld += record.withheld
    return run


@transaction.atomic
def _player_year_end(*, external_id: str, fy: formulas.FinancialYear, as_of: datetime):
    player = player_lock(external_id=external_id)
    if TdsYearEnd.objects.filter(player=player, fy=fy.label).exists():
        return None  # a concurrent run closed this one
    position = tax_positions(player_ids=[player.pk], fy=fy, until=as_of)[player.pk]
    closing = players_balances_at([player.pk], as_of).get(player.pk, ZERO)
    due = formulas.tds_at_year_end(
        withdrawals=position.withdrawals,
        closing=closing,
        deposits=position.deposits,
        opening=position.opening,
        taxed_before=position.taxed_net_winnings,
        rate_percent=tds_rate(),
    )
    accounts = player_accounts(player=player)
    legs, withheld = _withholding(accounts, due.tds)
    transfer_id = None
    if legs:
        legs.append(Leg(platform_accounts()[PlatformAccount.TDS_PAYABLE].pk, Money(withheld, CASH)))
        key = references.join("tds-year-end", fy.label, player.pk)
        transfer_id = transfer_post(
            kind=Transfer.Kind.TAX,
            reference=references.join("tds-year-end", fy.label, player.external_id),
            idempotency_key=key,
            legs=legs,
            memo=f"TDS at the end of FY {fy.label} on net winnings {due.net_winnings}",
        ).transfer_id
    return TdsYearEnd.objects.create(
        player=player,
        fy=fy.label,
        as_of=as_of,
        opening=position.opening,
        deposits=position.deposits,
        withdrawals=position.withdrawals,
        closing=closing,
        taxed_before=position.taxed_net_winnings,
        net_winnings=due.net_winnings,
        tds=due.tds,
        withheld=withheld,
        carry_forward=closing - withheld,
        transfer_id=transfer_id,
    )


def _withholding(accounts: dict[str, Account], due: Decimal) -> tuple[list[Leg], Decimal]:
    """TDS is taken from winnings, then from the deposit bucket (what the year end taxes is
    the whole balance). Both together hold at least it at the year's end (TDS <= 30 % of the
    closing balance); what the player moved into games since is not chased: the shortfall is
    recorded (`TdsYearEnd.shortfall`) for finance."""
    legs, left = [], due
    for bucket in (Bucket.WINNINGS, Bucket.DEPOSIT):
        take = min(left, accounts[bucket].balance.amount)
        if take > 0:
            legs.append(Leg(accounts[bucket].pk, -Money(take, CASH)))
            left -= take
    return legs, due - left
