"""Reads of wallets that need a little thought: balances, a payments client's own deposits and
withdrawals (what it reads back after a crash), and the tax reports for finance."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal

from django.db.models import Count, QuerySet, Sum
from django.db.models.functions import TruncMonth
from djmoney.money import Money

from rummy_ledger.api.models import ApiClient
from wallets.errors import UnknownPlayer, UnknownWithdrawal
from wallets.models import (
    Account,
    DepositGst,
    Entry,
    GatewayDeposit,
    Player,
    TdsYearEnd,
    Withdrawal,
)
from wallets.money.amounts import ZERO, amount_text
from wallets.services.deposits import Deposit, deposit_moved
from wallets.tax import formulas


def count_capped(queryset, cap: int) -> int:
    """How many rows, counting at most `cap + 1` (`SELECT count(*) FROM (... LIMIT cap + 1)`
    stops early): more than `cap` reads as `cap + 1`."""
    return queryset.order_by()[: cap + 1].count()


def withdrawals_to_review(queryset=None):
    """Withdrawals waiting for an operator's review: requested (a first one, or above the
    auto-approval limit) and not reviewed yet."""
    queryset = Withdrawal.objects.all() if queryset is None else queryset
    return queryset.filter(status=Withdrawal.Status.REQUESTED, review__isnull=True)


def player_by_external_id(external_id: str) -> Player:
    player = Player.objects.filter(external_id=external_id).first()
    if player is None:
        raise UnknownPlayer(f"no player {external_id!r}")
    return player


def wallet_balances(*, player: Player) -> dict[str, dict[str, str]]:
    """The player's balance per bucket, as decimal strings with their currency."""
    return wallets_balances(players=[player]).get(player.pk, {})


def wallets_balances(*, players: Sequence[Player]) -> dict[int, dict[str, dict[str, str]]]:
    """`wallet_balances` of each player (by pk), in one query."""
    accounts = Account.objects.filter(player__in=players, kind=Account.Kind.PLAYER).order_by(
        "player_id", "bucket"
    )
    balances: dict[int, dict[str, dict[str, str]]] = {}
    for a in accounts:
        balances.setdefault(a.player_id, {})[a.bucket] = {
            "amount": amount_text(a.balance.amount),
            "currency": a.currency,
        }
    return balances


# --- what a payments client reads back after a crash (its own only) ----------------------------


def withdrawal_of(*, client: ApiClient, withdrawal_id: int) -> Withdrawal:
    """The client's withdrawal; another client's does not exist for it (guessing ids tells a
    client nothing)."""
    withdrawal = (
        Withdrawal.objects.filter(client=client, pk=withdrawal_id).select_related("player").first()
    )
    if withdrawal is None:
        raise UnknownWithdrawal(f"no withdrawal {withdrawal_id}")
    return withdrawal


def withdrawals_listed(
    *, client: ApiClient, reference: str | None, after_id: int | None, count: int
) -> list[Withdrawal]:
    """The client's withdrawals after `after_id` (all when None), in id order, `count` at most;
    the one with `reference` when given."""
    rows = Withdrawal.objects.filter(client=client).select_related("player")
    return list(_after(_referenced(rows, reference), after_id)[:count])


@dataclass(frozen=True)
class DepositRead:
    """A deposit as its answer shows it: the record (its `pk` the list's cursor), the player
    credited and the amounts its transfer moved."""

    record: GatewayDeposit
    player: Player
    deposit: Deposit

    @property
    def pk(self) -> int:
        return self.record.pk


def deposits_listed(
    *, client: ApiClient, reference: str | None, after_id: int | None, count: int
) -> list[DepositRead]:
    """The client's deposits after `after_id` (all when None), in id order, `count` at most; the
    one with `reference` when given. Their amounts come from their transfers' entries, in one
    query, read back as a deposit made before is answered (`deposit_moved`)."""
    rows = GatewayDeposit.objects.filter(client=client)
    return _deposits_read(list(_after(_referenced(rows, reference), after_id)[:count]))


def deposits_by_pk(pks: Sequence[int]) -> list[DepositRead]:
    """These deposit records as their answers show them (the `deposit.credited` events)."""
    return _deposits_read(list(GatewayDeposit.objects.filter(pk__in=pks)))


def _deposits_read(records: list[GatewayDeposit]) -> list[DepositRead]:
    transfers = [r.transfer_id for r in records]
    entries = Entry.objects.filter(transfer_id__in=transfers).select_related("account__player")
    rates = dict(
        DepositGst.objects.filter(transfer_id__in=transfers).values_list(
            "transfer_id", "rate_percent"
        )
    )
    legs: dict[int, list[Entry]] = {}
    for entry in entries:
        legs.setdefault(entry.transfer_id, []).append(entry)
    return [_deposit_read(record, legs, rates) for record in records]


def _deposit_read(
    record: GatewayDeposit, legs: dict[int, list[Entry]], rates: dict[int, Decimal]
) -> DepositRead:
    deposit, credited = deposit_moved(
        transfer_id=record.transfer_id,
        legs=legs.get(record.transfer_id, []),
        rate=rates.get(record.transfer_id),
    )
    return DepositRead(record, credited.player, deposit)


def _referenced(rows: QuerySet, reference: str | None) -> QuerySet:
    return rows if reference is None else rows.filter(reference=reference)


def _after(rows: QuerySet, after_id: int | None) -> QuerySet:
    """The rows after the cursor's row id, in id order (`rummy_ledger.api.paging`)."""
    return (rows if after_id is None else rows.filter(pk__gt=after_id)).order_by("pk")


def account_balances(accounts: Sequence[Account]) -> dict[int, Money]:
    """Each account's balance as its own page shows it (`services.transfers.balance`): the cached
    one, or for platform accounts (append-only sinks with no cached balance) the sum of their
    entries, for all of them in one grouped query."""
    sums = dict(
        Entry.objects.filter(account_id__in=[a.pk for a in accounts if not a.caches_balance])
        .values("account_id")
        .annotate(total=Sum("amount"))
        .values_list("account_id", "total")
    )
    return {
        a.pk: a.balance if a.caches_balance else Money(sums.get(a.pk, ZERO), a.currency)
        for a in accounts
    }


def reversal_effect(transfer_ids: Sequence[int]) -> list[tuple[Account, Money]]:
    """What reversing these transfers does to each account: the opposite of what they moved,
    by account (the accounts they left unchanged on balance are left out)."""
    moved = (
        Entry.objects.filter(transfer_id__in=transfer_ids)
        .values("account_id")
        .annotate(total=Sum("amount"))
        .exclude(total=0)
        .values_list("account_id", "total")
    )
    totals = dict(moved)
    accounts = Account.objects.filter(pk__in=totals).select_related("player").order_by("code")
    return [(a, Money(-totals[a.pk], a.currency)) for a in accounts]


# --- tax reports --------------------------------------------------------------------------------


@dataclass(frozen=True)
class TdsLine:
    """One deduction for the quarterly TDS return (Form 26Q, s.194BA)."""

    date: datetime  # when the TDS was withheld (the ledger's time of the withholding)
    pan: str
    player: str
    kind: str  # withdrawal or year end
    reference: str
    amount_paid: Decimal  # the withdrawal, or the year end's net winnings
    net_winnings: Decimal  # taxed by this deduction
    tds: Decimal


def tds_filing_lines(*, start: datetime, end: datetime) -> list[TdsLine]:
    """TDS withheld in [start, end): approved or paid withdrawals (by approval) and year ends.
    A failed withdrawal returned its TDS: it is not filed."""
    withdrawals = (
        Withdrawal.objects.filter(
            status__in=[Withdrawal.Status.APPROVED, Withdrawal.Status.PAID],
            tds__gt=0,
            approval_transfer__created_at__gte=start,
            approval_transfer__created_at__lt=end,
        )
        .select_related("player", "approval_transfer")
        .order_by("approval_transfer__created_at", "pk")
    )
    year_ends = (
        TdsYearEnd.objects.filter(
            withheld__gt=0, transfer__created_at__gte=start, transfer__created_at__lt=end
        )
        .select_related("player", "transfer")
        .order_by("transfer__created_at", "pk")
    )
    lines = [
        TdsLine(
            w.approval_transfer.created_at,
            w.pan,
            w.player.external_id,
            "withdrawal",
            w.reference,
            w.amount.amount,
            w.taxed_net_winnings,
            w.tds.amount,
        )
        for w in withdrawals
    ] + [
        TdsLine(
            y.transfer.created_at,
            y.player.pan,
            y.player.external_id,
            "year end",
            f"FY {y.fy}",
            y.net_winnings,
            y.net_winnings,
            y.withheld,
        )
        for y in year_ends
    ]
    return sorted(lines, key=lambda line: line.date)


@dataclass(frozen=True)
class GstMonth:
    month: date
    rate: Decimal  # percent: one line per month and rate
    deposits: int
    amount: Decimal  # what players paid
    gst: Decimal  # the sum of each deposit's own recorded GST
    net: Decimal  # credited to their deposit buckets


def gst_months(*, start: datetime, end: datetime) -> list[GstMonth]:
    """GST on the deposits made in [start, end), per calendar month (India's time) and rate:
    each deposit counted at the rate and with the GST it recorded (`DepositGst`)."""
    rows = (
        DepositGst.objects.filter(transfer__created_at__gte=start, transfer__created_at__lt=end)
        .annotate(month=TruncMonth("transfer__created_at", tzinfo=formulas.INDIA))
        .values("month", "rate_percent")
        .annotate(n=Count("pk"), amount=Sum("amount"), gst=Sum("gst"))
        .order_by("month", "rate_percent")
    )
    return [
        GstMonth(
            r["month"].date(), r["rate_percent"], r["n"], r["amount"], r["gst"],
            r["amount"] - r["gst"],
        )
        for r in rows
    ]  # fmt: skip
