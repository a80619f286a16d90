"""Money out: a player's winnings to the payment gateway, TDS withheld (Rule 133).

- request: the player's row is locked first (deposits, withdrawals and the year end of one
  player run in turn, so TDS is computed on a stable history), then winnings -amount ->
  pending +amount, TDS computed now; up to `WITHDRAWAL_AUTO_APPROVE_MAX` it is approved at
  once, unless it is the player's first (none approved before); the rest wait for finance
  (`WithdrawalReview`: an operator reviews, an approver decides, through `proposal_decide`);
- approval: pending -amount -> gateway clearing +payout, TDS payable +tds;
- rejection (before approval): pending -> winnings, the whole amount;
- the gateway's result: paid (final), or failed: the approval is reversed exactly and the
  pending amount goes back to winnings, so TDS payable loses its TDS and the year's tax
  position no longer counts the withdrawal.
Every step posts with a key derived from the withdrawal (`withdrawal:<id>:<step>`) and checks
the status under the withdrawal's row lock, so a repeated call changes nothing.

A withdrawal belongs to the payments client that requested it: the gateway's result from any
other client is told no such withdrawal exists, and a reference another client used is a
conflict that names nothing of the first withdrawal.

Real money being switched off never blocks a withdrawal: players can always take their own
money out, and then their deposits too (`wallets.services.refunds`: where the money comes
from, and when no PAN is needed).
"""

from __future__ import annotations

import copy
from decimal import Decimal

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from djmoney.money import Money

from rummy_ledger.api.models import ApiClient
from rummy_ledger.events.event_types import EventType
from rummy_ledger.events.record import Happened, events_record
from wallets import references
from wallets.errors import (
    IdempotencyConflict,
    InsufficientFunds,
    KycRequired,
    UnknownWithdrawal,
    WithdrawalState,
)
from wallets.models import (
    CASH,
    Account,
    Bucket,
    KycStatus,
    PlatformAccount,
    Player,
    Transfer,
    Withdrawal,
    WithdrawalReview,
)
from wallets.services import refunds
from wallets.services.accounts import platform_accounts, player_accounts
from wallets.services.players import player_lock
from wallets.services.proposals import permission_required, reason_required
from wallets.services.transfers import (
    Leg,
    TransferRequest,
    ledger_now,
    transfer_reverse,
    transfers_post,
)
from wallets.tax import formulas
from wallets.tax.tds import TaxPosition, tax_position, tds_rate

Status = Withdrawal.Status


@transaction.atomic
def withdrawal_request(
    *, player_external_id: str, amount: Money, reference: str, client: ApiClient | None = None
) -> tuple[Withdrawal, bool]:
    """Withdraw from the winnings bucket, for `client` (None: the service itself); returns
    (withdrawal, created). The same reference with the same player and amount from the same
    client is the same withdrawal; with anything else, a conflict."""
    player = player_lock(external_id=player_external_id)
    stored = Withdrawal.objects.filter(reference=reference).first()
    if stored is not None:
        if stored.client_id != (client and client.pk):
            raise _reference_used(reference)  # another client's: nothing about it
        if (stored.player_id, stored.amount) != (player.pk, amount):
            raise _reference_used(reference, stored.pk)
        return stored, False
    # real money on: winnings only, always with a PAN (checked before anything else is read)
    refunds.kyc_checked(player=player, pan_needed=refunds.winnings_only(player))
    accounts = player_accounts(player=player)
    first = not player.withdrawals.filter(status__in=[Status.APPROVED, Status.PAID]).exists()
    withdrawal, sources = withdrawal_new(
        player=player,
        client=client,
        reference=reference,
        amount=amount,
        accounts=accounts,
        position=tax_position(player=player, fy=formulas.financial_year_of(ledger_now())),
        first=first,
    )
    try:
        with transaction.atomic():
            withdrawal.save(force_insert=True)
    except IntegrityError as exc:  # another player's request took the reference meanwhile
        raise _reference_used(reference) from exc
    legs = _request_legs(withdrawal, sources, accounts)
    try:
        with transaction.atomic():  # a savepoint: the balance can be read again after a refusal
            withdrawal.request_transfer_id = _post(withdrawal, "request", legs)
    except InsufficientFunds:  # a game entry took the money since it was read
        refunds.withdrawal_sources(
            player=player, accounts=player_accounts(player=player), amount=amount.amount
        )
        raise
    withdrawal.save(update_fields=["request_transfer"])
    _events(withdrawal, EventType.WITHDRAWAL_REQUESTED)  # as it is now: requested
    if not withdrawal.needs_approval:
        withdrawal.save(update_fields=_approve(withdrawal))
        _events(withdrawal, EventType.WITHDRAWAL_APPROVED)
    return withdrawal, True


def _events(withdrawal: Withdrawal, *happened: EventType) -> None:
    """The withdrawal's events, for the client that reported it (none for the service's own)."""
    if withdrawal.client_id is not None:
        events_record([Happened(t, withdrawal.client_id, withdrawal) for t in happened])


def withdrawal_new(
    *,
    player: Player,
    client: ApiClient | None,
    reference: str,
    amount: Money,
    accounts: dict[str, Account],
    position: TaxPosition,
    first: bool,
) -> tuple[Withdrawal, refunds.Sources]:
    """The withdrawal a request makes, not saved yet, and the buckets it takes from: TDS by Rule
    133 from the player's `position` in the year, the PAN checked where one is needed. `first`:
    the player has no approved or paid withdrawal (it waits for finance)."""
    sources = refunds.withdrawal_sources(player=player, accounts=accounts, amount=amount.amount)
    due = formulas.tds_at_withdrawal(
        amount=amount.amount,
        withdrawn_before=position.withdrawals,
        deposits=position.deposits,
        opening=position.opening,
        taxed_before=position.taxed_net_winnings,
        rate_percent=tds_rate(),
        threshold=Decimal(settings.TDS_THRESHOLD),
    )
    pan_needed = refunds.pan_required(player=player, net_winnings=due.net_winnings)
    refunds.kyc_checked(player=player, pan_needed=pan_needed)
    withdrawal = Withdrawal(
        player=player,
        client=client,
        reference=reference,
        amount=amount,
        net_winnings=due.net_winnings,
        taxed_net_winnings=due.taxed,
        tds=Money(due.tds, CASH),
        payout=Money(amount.amount - due.tds, CASH),
        pan=player.pan if pan_needed else "",
        from_deposit=sources.deposit,
        pan_required=pan_needed,
        needs_approval=first or amount.amount > Decimal(settings.WITHDRAWAL_AUTO_APPROVE_MAX),
    )
    return withdrawal, sources


def _reference_used(reference: str, withdrawal_id: int | None = None) -> IdempotencyConflict:
    details = {"reference": reference}
    if withdrawal_id is not None:  # the asking client's own withdrawal
        details["withdrawal_id"] = withdrawal_id
    return IdempotencyConflict(
        f"withdrawal reference {reference!r} was already used for another withdrawal",
        details=details,
    )


def _transfer(withdrawal: Withdrawal, step: str, legs: list[Leg]) -> TransferRequest:
    return TransferRequest(
        kind=Transfer.Kind.WITHDRAWAL,
        reference=references.join("withdrawal", withdrawal.pk),
        idempotency_key=references.join("withdrawal", withdrawal.pk, step),
        legs=legs,
        memo=f"withdrawal {withdrawal.reference}: {step}",
    )


def _post(withdrawal: Withdrawal, step: str, legs: list[Leg]) -> int:
    return transfers_post(requests=[_transfer(withdrawal, step, legs)])[0].transfer_id


def _request_legs(
    withdrawal: Withdrawal, sources: refunds.Sources, accounts: dict[str, Account]
) -> list[Leg]:
    """the buckets -amount -> pending +amount"""
    return [*sources.legs(accounts, -1), Leg(accounts[Bucket.PENDING].pk, withdrawal.amount)]


def _approval_legs(
    withdrawal: Withdrawal, pending: Account, platform: dict[str, Account]
) -> list[Leg]:
    """pending -amount -> gateway clearing +payout, TDS payable +tds"""
    legs = [Leg(pending.pk, -withdrawal.amount)]
    if withdrawal.payout.amount:
        legs.append(Leg(platform[PlatformAccount.GATEWAY_CLEARING].pk, withdrawal.payout))
    if withdrawal.tds.amount:
        legs.append(Leg(platform[PlatformAccount.TDS_PAYABLE].pk, withdrawal.tds))
    return legs


def _approved(withdrawal: Withdrawal) -> list[str]:
    withdrawal.status = Status.APPROVED
    withdrawal.decided_at = timezone.now()
    return ["approval_transfer", "status", "decided_at"]


def _approve(withdrawal: Withdrawal) -> list[str]:
    """Post the approval (`_approval_legs`); returns the fields set."""
    pending = player_accounts(player=withdrawal.player)[Bucket.PENDING]
    legs = _approval_legs(withdrawal, pending, platform_accounts())
    withdrawal.approval_transfer_id = _post(withdrawal, "approval", legs)
    return _approved(withdrawal)


def _give_back(withdrawal: Withdrawal) -> list[str]:
    """pending -> the buckets it came from, the whole amount; returns the fields set."""
    accounts = player_accounts(player=withdrawal.player)
    withdrawal.return_transfer_id = _post(
        withdrawal,
        "return",
        [
            Leg(accounts[Bucket.PENDING].pk, -withdrawal.amount),
            *refunds.withdrawn_from(withdrawal).legs(accounts, +1),
        ],
    )
    return ["return_transfer"]


def _locked(withdrawal_id: int, client: ApiClient | None = None) -> Withdrawal:
    """The withdrawal, locked; with `client`, only if it is that client's (else unknown, as
    if it did not exist: guessing ids tells a client nothing)."""
    withdrawals = Withdrawal.objects.select_for_update(of=("self",)).select_related("player")
    if client is not None:
        withdrawals = withdrawals.filter(client=client)
    withdrawal = withdrawals.filter(pk=withdrawal_id).first()
    if withdrawal is None:
        raise UnknownWithdrawal(f"no withdrawal {withdrawal_id}")
    return withdrawal


def _refuse(withdrawal: Withdrawal, wanted: str) -> WithdrawalState:
    return WithdrawalState(
        f"withdrawal #{withdrawal.pk} is {withdrawal.status}: it cannot become {wanted}",
        details={"withdrawal_id": withdrawal.pk, "status": withdrawal.status, "wanted": wanted},
    )


# --- the gateway's result -----------------------------------------------------------------------


@transaction.atomic
def withdrawal_paid(
    *, client: ApiClient | None, withdrawal_id: int, gateway_reference: str
) -> tuple[Withdrawal, bool]:
    """The gateway paid `client`'s withdrawal out (None: the service itself, any withdrawal):
    final. Returns (withdrawal, changed); repeating it is a no-op."""
    withdrawal = _locked(withdrawal_id, client)
    if withdrawal.status == Status.PAID:
        return _repeated(withdrawal, "gateway_reference", gateway_reference)
    if withdrawal.status != Status.APPROVED:
        raise _refuse(withdrawal, Status.PAID)
    other = Withdrawal.objects.filter(gateway_reference=gateway_reference).first()
    if other is not None:
        raise _gateway_reference_taken(
            gateway_reference, other.pk if client is None or other.client_id == client.pk else None
        )
    withdrawal.status = Status.PAID
    withdrawal.gateway_reference = gateway_reference
    withdrawal.settled_at = timezone.now()
    try:
        with transaction.atomic():
            withdrawal.save(update_fields=["status", "gateway_reference", "settled_at"])
    except IntegrityError as exc:  # a concurrent result named the same gateway reference
        raise _gateway_reference_taken(gateway_reference, None) from exc
    _events(withdrawal, EventType.WITHDRAWAL_PAID)
    return withdrawal, True


def _repeated(withdrawal: Withdrawal, field: str, given: str) -> tuple[Withdrawal, bool]:
    """The same result again is a no-op; the same status with other content contradicts the
    first result (409), whichever result it is."""
    if getattr(withdrawal, field) == given:
        return withdrawal, False
    raise WithdrawalState(
        f"withdrawal #{withdrawal.pk} is {withdrawal.status} already, with another {field}",
        details={"withdrawal_id": withdrawal.pk, "status": withdrawal.status, field: given},
    )


def _gateway_reference_taken(gateway_reference: str, other: int | None) -> IdempotencyConflict:
    return IdempotencyConflict(
        f"gateway reference {gateway_reference!r} already names another withdrawal",
        details={"gateway_reference": gateway_reference, "withdrawal_id": other},
    )


@transaction.atomic
def withdrawal_failed(
    *, client: ApiClient | None, withdrawal_id: int, reason: str
) -> tuple[Withdrawal, bool]:
    """The gateway could not pay `client`'s withdrawal (None: as for `withdrawal_paid`): the
    approval is reversed exactly (TDS included) and the amount goes back to winnings. Returns
    (withdrawal, changed); repeating it is a no-op."""
    withdrawal = _locked(withdrawal_id, client)
    reason = reason.strip()[:255]
    if withdrawal.status == Status.FAILED:
        return _repeated(withdrawal, "failure_reason", reason)
    if withdrawal.status != Status.APPROVED:
        raise _refuse(withdrawal, Status.FAILED)
    transfer_reverse(
        transfer=Transfer.objects.get(pk=withdrawal.approval_transfer_id),
        idempotency_key=references.join("withdrawal", withdrawal.pk, "approval-reversal"),
        memo=f"withdrawal {withdrawal.reference} failed: {reason}"[:255],
    )
    fields = _give_back(withdrawal)
    withdrawal.status = Status.FAILED
    withdrawal.failure_reason = reason
    withdrawal.settled_at = timezone.now()
    withdrawal.save(update_fields=[*fields, "status", "failure_reason", "settled_at"])
    _events(withdrawal, EventType.WITHDRAWAL_FAILED)
    return withdrawal, True


# --- finance's decision (called by `proposals.proposal_decide`, the review row locked) ---------


def review_approved(review: WithdrawalReview) -> None:
    """Approve the reviewed withdrawal: it must still wait, and the player still be verified
    with the PAN the TDS was computed for."""
    withdrawal = _locked(review.withdrawal_id)
    if withdrawal.status != Status.REQUESTED:
        raise _refuse(withdrawal, Status.APPROVED)
    player: Player = withdrawal.player
    if withdrawal.pan_required and (
        player.kyc_status != KycStatus.VERIFIED or player.pan != withdrawal.pan
    ):
        raise KycRequired(
            f"player {player.external_id}'s KYC changed since the request (now "
            f"{player.kyc_status}): reject this withdrawal",
            details={"player": player.external_id, "kyc_status": player.kyc_status},
        )
    withdrawal.save(update_fields=_approve(withdrawal))
    _events(withdrawal, EventType.WITHDRAWAL_APPROVED)


def review_rejected(review: WithdrawalReview) -> None:
    """Reject the reviewed withdrawal: the whole amount goes back to winnings."""
    withdrawal = _locked(review.withdrawal_id)
    if withdrawal.status != Status.REQUESTED:
        raise _refuse(withdrawal, Status.REJECTED)
    fields = _give_back(withdrawal)
    withdrawal.status = Status.REJECTED
    withdrawal.decided_at = timezone.now()
    withdrawal.save(update_fields=[*fields, "status", "decided_at"])
    _events(withdrawal, EventType.WITHDRAWAL_REJECTED)


def withdrawal_for_review(*, withdrawal_id: int) -> Withdrawal:
    """The withdrawal an operator reviews, locked: it must wait, with no review yet."""
    withdrawal = _locked(withdrawal_id)
    if withdrawal.status != Status.REQUESTED:
        raise _refuse(withdrawal, "reviewed")
    if WithdrawalReview.objects.filter(withdrawal=withdrawal).exists():
        raise WithdrawalState(
            f"withdrawal #{withdrawal.pk} was already reviewed",
            details={"withdrawal_id": withdrawal.pk, "status": withdrawal.status},
        )
    return withdrawal


@transaction.atomic
def withdrawal_review_propose(
    *, proposed_by: AbstractBaseUser, withdrawal_id: int, reason: str
) -> WithdrawalReview:
    """An operator has checked a withdrawal that waits for approval (the player, the KYC, the
    tax position) and hands it to an approver."""
    permission_required(proposed_by, "wallets.add_withdrawalreview")
    reason = reason_required(reason, "a review")
    withdrawal = withdrawal_for_review(withdrawal_id=withdrawal_id)
    return WithdrawalReview.objects.create(
        withdrawal=withdrawal, reason=reason, proposed_by=proposed_by
    )


# --- the wind-down (`wallets.services.wind_down`) -----------------------------------------------


def withdrawals_issue_approved(
    *,
    issued: list[tuple[Withdrawal, refunds.Sources]],
    accounts: dict[int, dict[str, Account]],
    platform: dict[str, Account],
) -> None:
    """Save many new withdrawals (from `withdrawal_new`, their players locked), approved at once:
    the wind-down's refunds, whose finance decision is the wind-down's own approval (by two
    people). Their request and approval transfers, with the keys and legs of `withdrawal_request`
    and of an approval, in one ledger call; then the rows, whole, in one INSERT (their ids are
    taken from the table's sequence first: the transfers' keys name them)."""
    if not issued:
        return
    requests = []
    for (withdrawal, sources), pk in zip(issued, _ids_reserved(len(issued)), strict=True):
        withdrawal.pk = pk
        mine = accounts[withdrawal.player_id]
        approval = _approval_legs(withdrawal, mine[Bucket.PENDING], platform)
        requests += [
            _transfer(withdrawal, "request", _request_legs(withdrawal, sources, mine)),
            _transfer(withdrawal, "approval", approval),
        ]
    posted = transfers_post(requests=requests)
    for (withdrawal, _), request, approval in zip(issued, posted[::2], posted[1::2], strict=True):
        withdrawal.request_transfer_id = request.transfer_id
        withdrawal.approval_transfer_id = approval.transfer_id
        _approved(withdrawal)
    Withdrawal.objects.bulk_create([w for w, _ in issued])
    # requested, then approved, as a withdrawal approved at once is told (the first as it would
    # read before its approval)
    told = [w for w, _ in issued if w.client_id is not None]
    events_record(
        [
            event
            for w in told
            for event in (
                Happened(EventType.WITHDRAWAL_REQUESTED, w.client_id, _as_requested(w)),
                Happened(EventType.WITHDRAWAL_APPROVED, w.client_id, w),
            )
        ]
    )


def _as_requested(withdrawal: Withdrawal) -> Withdrawal:
    requested = copy.copy(withdrawal)
    requested.status = Status.REQUESTED
    return requested


def _ids_reserved(n: int) -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
            [Withdrawal._meta.db_table, n],
        )
        return [row[0] for row in cursor.fetchall()]
