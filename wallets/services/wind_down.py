"""The wind-down: closing the real-money book while `REAL_MONEY=off`
(docs/regions-and-real-money.md).

Maker-checker: one member of finance proposes it, another approves it (`WindDown`), and both
only while real money is off. `manage.py wind_down` then runs it, and may run it again at any
time (a run is idempotent per player and resumable):

1. open games and tournaments are cancelled with full refunds, once the grace period
   (`WIND_DOWN_GRACE_MINUTES`, counted from the approval) has passed: the ledger never names
   them, the games app registers its cancel step (`wind_down_step_register`; tournaments add
   theirs the same way);
2. unspent INR bonus lots expire into promotions (`bonus_expire`: with real money off every
   lot is due);
3. every player with INR in deposit or winnings gets one refund withdrawal of all of it,
   reference `wind-down-<player>`, TDS per Rule 133, approved by the wind-down's approval; the
   gateway pays or fails it as any withdrawal. A player without verified KYC gets back what
   owes no TDS (their deposits, net of what they lost) and the rest (their winnings) is held
   until KYC arrives (`refundable`). Players are done `CHUNK` at a time, each chunk in one
   transaction under their locks (`wallets.services.wind_down_refunds`), and a refund still
   with the gateway is never doubled: a killed run, run again, misses nobody and repeats
   nothing; a refund that failed, or winnings released once KYC arrives, are refunded by a
   later run under a new reference (`wind-down-<player>-2`, ...). Practice chips are untouched.

A player depositing while a wind-down is approved and not finished is refused (`deposit_register`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from itertools import islice

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError
from django.utils import timezone

from rummy_ledger.api.models import ApiClient
from rummy_ledger.errors import DomainError
from wallets.errors import LedgerBusy, ProposalInvalid, RealMoneyUnavailable
from wallets.models import (
    Account,
    BonusLot,
    Bucket,
    KycStatus,
    Player,
    ProposalStatus,
    WindDown,
    WindDownLine,
)
from wallets.money.amounts import amount_text
from wallets.services.accounts import platform_accounts
from wallets.services.bonuses import bonus_expire
from wallets.services.proposals import permission_required, reason_required
from wallets.services.real_money import OFF
from wallets.services.transfers import ledger_now
from wallets.services.wind_down_refunds import IN_FLIGHT, Outcome, refundable, refunds_issue
from wallets.tax import formulas
from wallets.tax.tds import tax_positions

ZERO = formulas.ZERO
Held = WindDownLine.Held
CHUNK = 500  # players refunded in one transaction (`refunds_issue`) unless a run says


# --- what other apps cancel (the ledger never names their tables) -------------------------------


@dataclass(frozen=True)
class CancelStep:
    """Something still open that holds players' money: `open_count()` for the plan, `cancel()`
    cancels every one with full refunds and returns how many (each in its own transaction;
    what is busy is left for the next run)."""

    name: str
    open_count: Callable[[], int]
    cancel: Callable[[], int]


_STEPS: dict[str, CancelStep] = {}


def wind_down_step_register(step: CancelStep) -> None:
    _STEPS[step.name] = step


# --- maker-checker ------------------------------------------------------------------------------


def real_money_off_required(what: str) -> None:
    if settings.REAL_MONEY != OFF:
        raise ProposalInvalid(
            f"{what} only while REAL_MONEY=off (it is {settings.REAL_MONEY})",
            details={"real_money": settings.REAL_MONEY},
        )


def wind_down_propose(*, proposed_by: AbstractBaseUser, reason: str) -> WindDown:
    permission_required(proposed_by, "wallets.add_winddown")
    real_money_off_required("a wind-down is proposed")
    if WindDown.objects.filter(status=ProposalStatus.PROPOSED).exists():
        raise ProposalInvalid("a wind-down is already proposed: decide that one first")
    return WindDown.objects.create(
        reason=reason_required(reason, "a wind-down"), proposed_by=proposed_by
    )


def wind_down_approved(wind_down: WindDown) -> None:
    real_money_off_required("a wind-down is approved")


def wind_down_in_progress() -> WindDown | None:
    """The approved wind-down not finished yet (deposits are refused meanwhile)."""
    return (
        WindDown.objects.filter(status=ProposalStatus.APPROVED, finished_at__isnull=True)
        .order_by("-decided_at")
        .first()
    )


class Unread:
    """The caller did not read whether a wind-down is unfinished (`wind_down_check` reads it)."""


UNREAD = Unread()


def wind_down_check(refused: str, running: int | Unread | None = UNREAD) -> None:
    """Refuse what would take real money in (`refused`: deposits, cash games, tournament
    entries) while an approved wind-down is unfinished, whatever `REAL_MONEY` says: it is closing
    the real-money book. `running`: that wind-down's id (None: there is none), when the caller
    read it already."""
    if isinstance(running, Unread):
        found = wind_down_in_progress()
        running = found.pk if found is not None else None
    if running is not None:
        raise RealMoneyUnavailable(
            f"the real-money book is being closed (wind-down #{running}): no {refused}",
            details={"wind_down": running},
        )


def real_money_start_check() -> None:
    """Refuse to start the service offering real money (`REAL_MONEY` on or restricted) while an
    approved wind-down is unfinished: the book it is closing must stay closed (`manage.py serve`
    calls it after migrating)."""
    running = wind_down_in_progress()
    if running is not None and settings.REAL_MONEY != OFF:
        raise RealMoneyUnavailable(
            f"REAL_MONEY={settings.REAL_MONEY} while wind-down #{running.pk} is approved and "
            "not finished: finish it (manage.py wind_down --client GATEWAY) with REAL_MONEY=off, "
            "or start with REAL_MONEY=off",
            details={"wind_down": running.pk},
        )


# --- the plan -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlanLine:
    player: str
    kyc_status: str
    deposit: Decimal
    winnings: Decimal
    refund: Decimal

    @property
    def held(self) -> Decimal:
        return self.deposit + self.winnings - self.refund


@dataclass(frozen=True)
class Plan:
    open_by_step: dict[str, int]
    bonus_lots: int
    lines: list[PlanLine]


def balances_held() -> dict[int, dict[str, Decimal]]:
    """Deposit and winnings of every player holding INR in either (one grouped query)."""
    rows = Account.objects.filter(
        kind=Account.Kind.PLAYER, bucket__in=[Bucket.DEPOSIT, Bucket.WINNINGS], balance__gt=0
    ).values_list("player_id", "bucket", "balance")
    out: dict[int, dict[str, Decimal]] = {}
    for player_id, bucket, balance in rows:
        out.setdefault(player_id, {Bucket.DEPOSIT: ZERO, Bucket.WINNINGS: ZERO})[bucket] = balance
    return out


def wind_down_plan() -> Plan:
    """What a run would do now; changes nothing."""
    held = balances_held()
    players = Player.objects.filter(pk__in=list(held)).order_by("external_id")
    players = list(players.only("pk", "external_id", "kyc_status"))
    unverified = [p.pk for p in players if p.kyc_status != KycStatus.VERIFIED]
    positions = tax_positions(player_ids=unverified, fy=_this_year())
    lines = []
    for p in players:
        deposit, winnings = held[p.pk][Bucket.DEPOSIT], held[p.pk][Bucket.WINNINGS]
        refund = refundable(
            verified=p.pk not in positions,
            held=deposit + winnings,
            untaxed=positions[p.pk].untaxed if p.pk in positions else ZERO,
        )
        lines.append(PlanLine(p.external_id, p.kyc_status, deposit, winnings, refund))
    return Plan(
        open_by_step={name: step.open_count() for name, step in _STEPS.items()},
        bonus_lots=BonusLot.objects.filter(remaining__gt=0).count(),
        lines=lines,
    )


# --- a run --------------------------------------------------------------------------------------


@dataclass
class Run:
    wind_down: int
    cancelled: dict[str, int] = field(default_factory=dict)
    bonus_lots_expired: int = 0
    players: int = 0
    refunds: int = 0  # issued by this run
    refunded: Decimal = ZERO
    tds: Decimal = ZERO
    held: Decimal = ZERO
    held_players: int = 0
    in_flight: int = 0  # refunds (of any run) not paid or failed yet
    busy: list[int] = field(default_factory=list)  # players

    def count(self, outcomes: list[Outcome]) -> None:
        for outcome in outcomes:
            self.players += 1
            if (issued := outcome.issued) is not None:
                self.refunds += 1
                self.refunded += issued.amount.amount
                self.tds += issued.tds.amount
            line = outcome.line
            if line.held and line.held_reason != Held.IN_FLIGHT:
                self.held_players += 1
                self.held += line.held

    def summary(self) -> str:
        cancelled = ", ".join(f"{n} {name}" for name, n in self.cancelled.items()) or "nothing"
        return (
            f"wind-down #{self.wind_down}: cancelled {cancelled}; {self.bonus_lots_expired} bonus "
            f"lot(s) expired; {self.players} player(s): {self.refunds} refund(s) issued now "
            f"({amount_text(self.refunded)} INR, TDS {amount_text(self.tds)}); "
            f"{self.in_flight} with the gateway; "
            f"{self.held_players} holding {amount_text(self.held)} INR; busy: {len(self.busy)}"
        )


def wind_down_ready(*, client_name: str) -> tuple[WindDown, ApiClient]:
    """The approved wind-down a run works on, and its payments client; or why not now."""
    wind_down = wind_down_latest()
    if wind_down is None:
        raise ProposalInvalid("no wind-down is approved: propose one and have it approved")
    real_money_off_required("a wind-down runs")
    client = ApiClient.objects.filter(name=client_name, is_active=True).first()
    if client is None or ApiClient.Scope.PAYMENTS not in client.scopes:
        raise ProposalInvalid(f"{client_name!r} is no active payments client")
    if wind_down.client_id not in (None, client.pk):
        raise ProposalInvalid(
            f"wind-down #{wind_down.pk} refunds through {wind_down.client}, not {client_name}"
        )
    return wind_down, client


def wind_down_latest() -> WindDown | None:
    return WindDown.objects.filter(status=ProposalStatus.APPROVED).order_by("-decided_at").first()


def grace_ends(wind_down: WindDown) -> datetime:
    return wind_down.decided_at + timedelta(minutes=settings.WIND_DOWN_GRACE_MINUTES)


def wind_down_run(
    *,
    wind_down: WindDown,
    client: ApiClient,
    progress: Callable[[Iterable[int]], Iterable[int]] = iter,
    chunk: int = CHUNK,
) -> Run:
    """Run the approved wind-down (again): steps 1 to 3 of the module's docstring, `chunk`
    players to a transaction."""
    now = timezone.now()
    if now < grace_ends(wind_down):
        raise ProposalInvalid(
            f"the grace period for open games runs until {grace_ends(wind_down).isoformat()}"
        )
    WindDown.objects.filter(pk=wind_down.pk, client__isnull=True).update(client=client)
    WindDown.objects.filter(pk=wind_down.pk, started_at__isnull=True).update(started_at=now)
    WindDown.objects.filter(pk=wind_down.pk).update(finished_at=None)
    run = Run(wind_down=wind_down.pk)
    for name, step in _STEPS.items():
        run.cancelled[name] = step.cancel()
    while expired := bonus_expire(limit=10_000):
        run.bonus_lots_expired += expired
    platform = platform_accounts()
    busy: list[int] = []
    players = iter(progress(_candidates(wind_down)))
    while ids := list(islice(players, chunk)):
        try:
            done = refunds_issue(
                wind_down=wind_down, client=client, platform=platform, player_ids=ids
            )
        except (DomainError, IntegrityError):  # someone's balance moved, say: each alone below
            busy += ids
            continue
        run.count(done.outcomes)
        busy += done.skipped
    for pk in busy:  # alone, waiting for them: a concurrent run held them, or their chunk failed
        try:
            done = refunds_issue(
                wind_down=wind_down, client=client, platform=platform, player_ids=[pk], wait=True
            )
        except LedgerBusy:
            run.busy.append(pk)
            continue
        run.count(done.outcomes)
    run.in_flight = wind_down.lines.filter(withdrawal__status__in=IN_FLIGHT).count()
    if not run.busy and run.in_flight == 0:
        WindDown.objects.filter(pk=wind_down.pk).update(finished_at=timezone.now())
    return run


def _candidates(wind_down: WindDown) -> list[int]:
    """Players with INR in deposit or winnings, and those the wind-down already reached (their
    line is refreshed: a refund paid or failed since)."""
    ids = set(balances_held()) | set(wind_down.lines.values_list("player_id", flat=True))
    return sorted(ids)


def _this_year() -> formulas.FinancialYear:
    return formulas.financial_year_of(ledger_now())


REPORT_HEADER = [
    "player",
    "kyc_status",
    "refunded",
    "tds",
    "held",
    "held_reason",
    "refunds",
    "last_refund",
    "last_refund_status",
]


def wind_down_report_rows(wind_down: WindDown) -> list[list]:
    """The report: every player the wind-down reached, what was refunded, the TDS, what is held
    and why (the CSV of the command and of the admin page)."""
    return [
        [
            line.player.external_id,
            line.player.kyc_status,
            amount_text(line.refunded),
            amount_text(line.tds),
            amount_text(line.held),
            line.held_reason,
            line.refunds,
            line.withdrawal.reference if line.withdrawal else "",
            line.withdrawal.status if line.withdrawal else "",
        ]
        for line in wind_down.lines.select_related("player", "withdrawal").order_by(
            "player__external_id"
        )
    ]
