"""Posting transfers, reversing them, and reading balances and statements.

Every movement of money goes through `transfers_post`, which validates in Python (clear errors
before any round trip) and then calls the `ledger_post_batch` SQL function (one round trip for any
number of transfers; locking, idempotency and overdraft checks happen inside PostgreSQL).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Count, Sum, Window
from django.db.models.functions import Coalesce
from djmoney.money import Money

from wallets import references
from wallets.errors import (
    AlreadyReversed,
    AmountOverLimit,
    BalanceOutOfRange,
    IdempotencyConflict,
    InsufficientFunds,
    LedgerBusy,
    LedgerError,
    UnknownAccount,
)
from wallets.models import Account, Entry, Transfer
from wallets.money.amounts import ZERO
from wallets.money.parsing import money_checked
from wallets.services.balances import archived_until, balances_at

_TRANSFER_KINDS = frozenset(Transfer.Kind.values)


@dataclass(frozen=True)
class Leg:
    account_id: int
    amount: Money


@dataclass(frozen=True)
class TransferRequest:
    """One transfer to post: its legs must sum to zero per currency."""

    kind: str
    reference: str
    idempotency_key: str
    legs: Sequence[Leg]
    memo: str = ""
    reverses_id: int | None = None
    content_hash: str = field(init=False, default="")

    def __post_init__(self) -> None:
        # Amounts are normalised once (30 and 30.00 are one amount) before they are hashed.
        object.__setattr__(self, "legs", _validated_legs(self))
        object.__setattr__(self, "content_hash", _content_hash(self))


@dataclass(frozen=True)
class Posted:
    transfer_id: int
    created: bool


def _validated_legs(request: TransferRequest) -> tuple[Leg, ...]:
    if request.kind not in _TRANSFER_KINDS:
        raise LedgerError(f"unknown transfer kind {request.kind!r}")
    if not request.idempotency_key or len(request.idempotency_key) > 160:
        raise LedgerError("an idempotency key of 1 to 160 characters is required")
    if not request.reference or len(request.reference) > 128:
        raise LedgerError("a reference of 1 to 128 characters is required")
    if len(request.legs) < 2:
        raise LedgerError("a transfer needs at least two legs")
    totals: dict[str, Decimal] = defaultdict(Decimal)
    legs = []
    for leg in request.legs:
        if not isinstance(leg.account_id, int) or isinstance(leg.account_id, bool):
            raise UnknownAccount(f"account id must be an integer, got {leg.account_id!r}")
        amount = money_checked(leg.amount)
        if amount.amount == 0:
            raise LedgerError("a leg of zero moves nothing")
        totals[str(amount.currency)] += amount.amount
        legs.append(Leg(leg.account_id, amount))
    unbalanced = {cur: str(total) for cur, total in totals.items() if total != 0}
    if unbalanced:
        raise LedgerError(
            "the legs do not sum to zero per currency", details={"unbalanced": unbalanced}
        )
    return tuple(legs)


def _content_hash(request: TransferRequest) -> str:
    legs = sorted(
        (leg.account_id, str(leg.amount.amount), str(leg.amount.currency)) for leg in request.legs
    )
    body = [request.kind, request.reference, request.reverses_id, legs]
    return hashlib.sha256(json.dumps(body).encode()).hexdigest()


def transfer_post(
    *,
    kind: str,
    reference: str,
    idempotency_key: str,
    legs: Sequence[Leg],
    memo: str = "",
) -> Posted:
    """Post one transfer; the same key with the same content returns the first one."""
    request = TransferRequest(
        kind=kind, reference=reference, idempotency_key=idempotency_key, legs=legs, memo=memo
    )
    return transfers_post(requests=[request])[0]


def transfers_post(*, requests: Sequence[TransferRequest]) -> list[Posted]:
    """Post many transfers in one database transaction (all or none), in request order."""
    if not requests:
        return []
    sql, params = transfers_statement(requests)
    # Outside a transaction the single statement is its own transaction (one round trip, the
    # deferred checks run at its end); inside one, a failure marks the whole block for rollback.
    block = transaction.atomic(savepoint=False) if connection.in_atomic_block else nullcontext()
    try:
        with block, connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
    except DatabaseError as exc:
        raise ledger_error(exc) from exc
    return [Posted(transfer_id=row[0], created=row[1]) for row in rows]


def transfers_statement(requests: Sequence[TransferRequest]) -> tuple[str, list]:
    """The `ledger_post_batch` statement that posts `requests` (SQL, parameters), for a caller
    that sends it with other statements in one round trip (a game's opening); a failure it
    raises is translated by `ledger_error`."""
    keys = [r.idempotency_key for r in requests]
    if len(set(keys)) != len(keys):
        raise LedgerError("a batch holds the same idempotency key twice")
    e_transfer, e_account, e_amount, e_currency = [], [], [], []
    for index, request in enumerate(requests, start=1):
        for leg in request.legs:
            e_transfer.append(index)
            e_account.append(leg.account_id)
            e_amount.append(leg.amount.amount)
            e_currency.append(str(leg.amount.currency))
    params = [
        keys,
        [r.kind for r in requests],
        [r.reference for r in requests],
        [r.content_hash for r in requests],
        [r.reverses_id for r in requests],
        [r.memo for r in requests],
        e_transfer,
        e_account,
        e_amount,
        e_currency,
        f"{settings.LEDGER_LOCK_TIMEOUT_MS}ms",
        settings.LEDGER_MAX_TRANSFER,
    ]
    sql = "SELECT transfer_id, created FROM ledger_post_batch(%s::text[], %s::text[], %s::text[], %s::text[], %s::bigint[], %s::text[], %s::int[], %s::bigint[], %s::numeric[], %s::text[], %s, %s::numeric)"  # noqa: E501
    return sql, params


_SQLSTATE_ERRORS = {
    "RL001": IdempotencyConflict,
    "RL002": UnknownAccount,
    "RL003": LedgerError,
    "RL004": InsufficientFunds,
    "RL007": AmountOverLimit,
    "55P03": LedgerBusy,  # lock_timeout
    "40P01": LedgerBusy,  # deadlock detected (should not happen: locks are ordered)
    "40001": LedgerBusy,  # serialization failure
}


def ledger_error(exc: DatabaseError) -> Exception:
    """The ledger's error for a failure of `ledger_post_batch` (the exception itself if none)."""
    diag = getattr(exc.__cause__, "diag", None)
    sqlstate = getattr(exc.__cause__, "sqlstate", None)
    message = getattr(diag, "message_primary", None) or str(exc)
    if sqlstate == "RL004":
        return InsufficientFunds(message, details={"accounts": diag.message_detail.split(",")})
    if sqlstate == "23505" and "reverses" in (getattr(diag, "constraint_name", "") or ""):
        return AlreadyReversed("this transfer has already been reversed")
    if (
        sqlstate == "23514"
        and getattr(diag, "constraint_name", "") == "account_balance_not_negative"
    ):
        return InsufficientFunds("insufficient funds")
    if sqlstate == "22003":  # numeric field overflow: a balance beyond numeric(18,2)
        return BalanceOutOfRange("the posting would take a balance beyond what the ledger holds")
    error_class = _SQLSTATE_ERRORS.get(sqlstate)
    return error_class(message) if error_class else exc


def transfer_reverse(*, transfer: Transfer, idempotency_key: str, memo: str = "") -> Posted:
    """Post the exact opposite of `transfer`, pointing at it; a transfer is reversed once."""
    legs = [Leg(e.account_id, -e.amount) for e in transfer.entries.all()]
    request = TransferRequest(
        kind=Transfer.Kind.REVERSAL,
        reference=references.join("reversal", transfer.pk),
        idempotency_key=idempotency_key,
        legs=legs,
        memo=memo or f"reverses {transfer.kind} {transfer.reference}",
        reverses_id=transfer.pk,
    )
    return transfers_post(requests=[request])[0]


def ledger_now() -> datetime:
    """The time this transaction's transfers are stamped with (PostgreSQL's `now()`: the
    transaction's start), so whatever is decided by date (a financial year) agrees with them."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT now()")
        return cursor.fetchone()[0]


def balance(*, account: Account, at: datetime | None = None) -> Money:
    """The balance now, or as of a past moment (the entries made until then, `at` included:
    PostgreSQL keeps microseconds, so that is before `at` + 1 µs)."""
    if at is None and account.caches_balance:
        return Account.objects.get(pk=account.pk).balance
    return _balance_at(account, None if at is None else at + timedelta(microseconds=1))


def _balance_at(account: Account, moment: datetime | None) -> Money:
    found = balances_at(accounts=[account.pk], moment=moment)
    return Money(found.get(account.pk, ZERO), account.currency)


@dataclass(frozen=True)
class StatementLine:
    entry: Entry
    running_balance: Money


@dataclass(frozen=True)
class Statement:
    account: Account
    start: datetime
    end: datetime
    opening: Money
    lines: list[StatementLine]  # all of them, or the page asked for
    closing: Money
    line_count: int  # in the whole range
    first: int = 0  # the position of `lines[0]` in the range
    # when the range starts in archived months: the lines start at their end, from this balance
    archived_until: datetime | None = None
    archived_balance: Money | None = None


def statement(
    *, account: Account, start: datetime, end: datetime, first: int = 0, count: int | None = None
) -> Statement:
    """The account's entries in [start, end) with a running balance from the opening balance.
    `first` and `count` take one page of them: the running balances are still the range's (the
    window is computed before the page is cut), and the closing balance is the whole range's."""
    if end < start:
        raise LedgerError("a statement's end comes before its start")
    opening = _balance_at(account, start)
    # An archived month's entries are out of the ledger (archives are a prefix of history): the
    # lines start after the newest one, from the balance the closes give there.
    lines_from = max(start, min(archived_until() or start, end))
    base = opening if lines_from == start else _balance_at(account, lines_from)
    archived = (
        {} if lines_from == start else {"archived_until": lines_from, "archived_balance": base}
    )
    in_range = Entry.objects.filter(account=account, created_at__gte=lines_from, created_at__lt=end)
    entries = (
        in_range.select_related("transfer")
        .annotate(running=Window(Sum("amount"), order_by=["created_at", "id"]))
        .order_by("created_at", "id")
    )
    if count is None and first == 0:
        lines = [StatementLine(e, base + Money(e.running, account.currency)) for e in entries]
        closing = lines[-1].running_balance if lines else base
        return Statement(account, start, end, opening, lines, closing, len(lines), **archived)
    page = entries[first : first + count] if count is not None else entries[first:]
    lines = [StatementLine(e, base + Money(e.running, account.currency)) for e in page]
    totals = in_range.aggregate(n=Count("id"), moved=Coalesce(Sum("amount"), ZERO))
    closing = base + Money(totals["moved"], account.currency)
    return Statement(account, start, end, opening, lines, closing, totals["n"], first, **archived)
