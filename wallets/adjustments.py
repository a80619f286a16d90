"""Maker-checker: an operator proposes, a different approver approves or rejects.

Only approval moves money. Approving locks the proposal row, re-reads it and returns early when it
was already decided, and posts with an idempotency key derived from the proposal id: approving
twice (two clicks, two approvers at once) posts once.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from djmoney.money import Money

from rummy_ledger.errors import Conflict, DomainError
from wallets.ledger import InsufficientFunds, Leg, TransferRequest, transfers_post
from wallets.models import (
    BUCKET_CURRENCY,
    Account,
    Adjustment,
    PlatformAccount,
    Player,
    ProposalStatus,
    Reversal,
    Transfer,
)
from wallets.money import money_checked
from wallets.services import platform_accounts


class SelfApproval(Conflict):
    code = "self_approval"


class AlreadyDecided(Conflict):
    code = "already_decided"


class PermissionRefused(DomainError):
    status = 403
    code = "forbidden"


def _require(user: AbstractBaseUser, perm: str) -> None:
    if not user.has_perm(perm):
        raise PermissionRefused(f"you lack the permission {perm}")


# --- adjustments --------------------------------------------------------------------------------


def adjustment_propose(
    *,
    proposed_by: AbstractBaseUser,
    player: Player,
    bucket: str,
    direction: str,
    amount: Money,
    reason: str,
) -> Adjustment:
    _require(proposed_by, "wallets.add_adjustment")
    currency = BUCKET_CURRENCY.get(bucket)
    if currency is None:
        raise DomainError(f"unknown bucket {bucket!r}")
    if direction not in Adjustment.Direction.values:
        raise DomainError(f"direction must be credit or debit, not {direction!r}")
    amount = money_checked(Money(amount.amount, currency))
    if amount.amount <= 0:
        raise DomainError("an adjustment moves a positive amount; choose credit or debit")
    if not reason.strip():
        raise DomainError("an adjustment needs a reason")
    return Adjustment.objects.create(
        player=player,
        bucket=bucket,
        direction=direction,
        amount=amount,
        reason=reason.strip(),
        proposed_by=proposed_by,
    )


def _locked_for_decision(model, pk: int, user: AbstractBaseUser, perm: str):
    _require(user, perm)
    proposal = model.objects.select_for_update().get(pk=pk)
    if proposal.proposed_by_id == user.pk:
        raise SelfApproval("a proposal is approved or rejected by someone other than its proposer")
    return proposal


@transaction.atomic
def adjustment_approve(*, adjustment_id: int, approved_by: AbstractBaseUser) -> Adjustment:
    """Post the adjustment against the `adjustments` platform account (once, whatever happens)."""
    adj = _locked_for_decision(Adjustment, adjustment_id, approved_by, "wallets.approve_adjustment")
    if adj.status == ProposalStatus.APPROVED:
        return adj  # approving twice posts once
    if adj.status != ProposalStatus.PROPOSED:
        raise AlreadyDecided(f"adjustment #{adj.pk} was already {adj.status}")
    account = Account.objects.get(
        player_id=adj.player_id, bucket=adj.bucket, kind=Account.Kind.PLAYER
    )
    sink = platform_accounts()[PlatformAccount.ADJUSTMENTS]
    if str(adj.amount.currency) != str(sink.balance.currency):
        sink = platform_accounts()[PlatformAccount.CHIPS_ISSUANCE]  # chips are never cash
    signed = adj.amount if adj.direction == Adjustment.Direction.CREDIT else -adj.amount
    request = TransferRequest(
        kind=Transfer.Kind.ADJUSTMENT,
        reference=f"adjustment:{adj.pk}",
        idempotency_key=f"adjustment:{adj.pk}",
        legs=[Leg(account.pk, signed), Leg(sink.pk, -signed)],
        memo=adj.reason[:255],
    )
    try:
        posted = transfers_post(requests=[request])[0]
    except InsufficientFunds as exc:
        raise InsufficientFunds(
            f"refused: debiting {adj.amount} would take {account.code} below zero "
            f"(balance {account.balance})",
            details={"accounts": [account.code]},
        ) from exc
    adj.status = ProposalStatus.APPROVED
    adj.decided_by = approved_by
    adj.decided_at = timezone.now()
    adj.transfer_id = posted.transfer_id
    adj.save(update_fields=["status", "decided_by", "decided_at", "transfer"])
    return adj


@transaction.atomic
def adjustment_reject(
    *, adjustment_id: int, rejected_by: AbstractBaseUser, note: str = ""
) -> Adjustment:
    adj = _locked_for_decision(Adjustment, adjustment_id, rejected_by, "wallets.approve_adjustment")
    if adj.status == ProposalStatus.REJECTED:
        return adj
    if adj.status != ProposalStatus.PROPOSED:
        raise AlreadyDecided(f"adjustment #{adj.pk} was already {adj.status}")
    adj.status = ProposalStatus.REJECTED
    adj.decided_by = rejected_by
    adj.decided_at = timezone.now()
    adj.decision_note = note[:255]
    adj.save(update_fields=["status", "decided_by", "decided_at", "decision_note"])
    return adj


# --- reversals ----------------------------------------------------------------------------------


def reversal_propose(
    *,
    proposed_by: AbstractBaseUser,
    reference: str,
    transfer_ids: Sequence[int],
    reason: str,
) -> Reversal:
    """Propose undoing `transfer_ids` (e.g. every transfer of a settled game) as one unit."""
    _require(proposed_by, "wallets.add_reversal")
    ids = sorted(set(transfer_ids))
    if not ids:
        raise DomainError("there is nothing to reverse")
    if not reason.strip():
        raise DomainError("a reversal needs a reason")
    transfers = Transfer.objects.filter(pk__in=ids)
    if transfers.count() != len(ids):
        raise DomainError("some of these transfers do not exist")
    if transfers.filter(kind=Transfer.Kind.REVERSAL).exists():
        raise DomainError("reversal transfers are not reversed again")
    if Transfer.objects.filter(reverses_id__in=ids).exists():
        raise Conflict("some of these transfers are already reversed", code="already_reversed")
    if Reversal.objects.filter(
        reference=reference, status__in=[ProposalStatus.PROPOSED, ProposalStatus.APPROVED]
    ).exists():
        raise Conflict(f"{reference} is already reversed or proposed for reversal")
    return Reversal.objects.create(
        reference=reference, transfer_ids=ids, reason=reason.strip(), proposed_by=proposed_by
    )


@transaction.atomic
def reversal_approve(*, reversal_id: int, approved_by: AbstractBaseUser) -> Reversal:
    """Post the exact opposite of every transfer, all in one database transaction, or nothing."""
    rev = _locked_for_decision(Reversal, reversal_id, approved_by, "wallets.approve_reversal")
    if rev.status == ProposalStatus.APPROVED:
        return rev
    if rev.status != ProposalStatus.PROPOSED:
        raise AlreadyDecided(f"reversal #{rev.pk} was already {rev.status}")
    transfers = Transfer.objects.filter(pk__in=rev.transfer_ids).prefetch_related("entries")
    requests = [
        TransferRequest(
            kind=Transfer.Kind.REVERSAL,
            reference=f"reversal:{t.pk}",
            idempotency_key=f"reversal:{rev.pk}:{t.pk}",
            legs=[Leg(e.account_id, -e.amount) for e in t.entries.all()],
            memo=f"{rev.reference}: reverses {t.kind} {t.reference}"[:255],
            reverses_id=t.pk,
        )
        for t in sorted(transfers, key=lambda t: t.pk, reverse=True)
    ]
    try:
        posted = transfers_post(requests=requests)
    except InsufficientFunds as exc:
        accounts = exc.details.get("accounts", [])
        raise InsufficientFunds(
            f"refused: reversing {rev.reference} would take {', '.join(accounts)} below zero "
            "(the money was already spent or withdrawn); nothing was posted",
            details={"accounts": accounts},
        ) from exc
    rev.status = ProposalStatus.APPROVED
    rev.decided_by = approved_by
    rev.decided_at = timezone.now()
    rev.posted_transfer_ids = [p.transfer_id for p in posted]
    rev.save(update_fields=["status", "decided_by", "decided_at", "posted_transfer_ids"])
    return rev


@transaction.atomic
def reversal_reject(*, reversal_id: int, rejected_by: AbstractBaseUser, note: str = "") -> Reversal:
    rev = _locked_for_decision(Reversal, reversal_id, rejected_by, "wallets.approve_reversal")
    if rev.status == ProposalStatus.REJECTED:
        return rev
    if rev.status != ProposalStatus.PROPOSED:
        raise AlreadyDecided(f"reversal #{rev.pk} was already {rev.status}")
    rev.status = ProposalStatus.REJECTED
    rev.decided_by = rejected_by
    rev.decided_at = timezone.now()
    rev.decision_note = note[:255]
    rev.save(update_fields=["status", "decided_by", "decided_at", "decision_note"])
    return rev
