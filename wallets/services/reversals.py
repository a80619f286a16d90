"""Reversals: undoing transfers (e.g. every transfer of a settled game) as one unit, proposed by
one member of staff and posted only when another approves it (a proposal kind:
`wallets.services.proposals`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from wallets import references
from wallets.errors import AlreadyReversed, InsufficientFunds, ProposalInvalid
from wallets.models import (
    Bucket,
    ProposalStatus,
    Reversal,
    ReversalTransfer,
    Transfer,
)
from wallets.services.bonuses import bonus_follow_reversal
from wallets.services.proposals import permission_required, reason_required
from wallets.services.transfers import Leg, TransferRequest, transfers_post


@transaction.atomic
def reversal_propose(
    *,
    proposed_by: AbstractBaseUser,
    reference: str,
    transfer_ids: Sequence[int],
    reason: str,
) -> Reversal:
    """Propose undoing `transfer_ids` (e.g. every transfer of a settled game) as one unit."""
    permission_required(proposed_by, "wallets.add_reversal")
    ids = sorted(set(transfer_ids))
    if not ids:
        raise ProposalInvalid("there is nothing to reverse")
    reason = reason_required(reason, "a reversal")
    transfers = Transfer.objects.filter(pk__in=ids)
    if transfers.count() != len(ids):
        raise ProposalInvalid("some of these transfers do not exist")
    if transfers.filter(kind=Transfer.Kind.REVERSAL).exists():
        raise ProposalInvalid("reversal transfers are not reversed again")
    if Transfer.objects.filter(reverses_id__in=ids).exists():
        raise AlreadyReversed("some of these transfers are already reversed")
    if Reversal.objects.filter(
        reference=reference, status__in=[ProposalStatus.PROPOSED, ProposalStatus.APPROVED]
    ).exists():
        raise AlreadyReversed(f"{reference} is already reversed or proposed for reversal")
    reversal = Reversal.objects.create(reference=reference, reason=reason, proposed_by=proposed_by)
    _link(reversal, ids, ReversalTransfer.Role.TARGET)
    return reversal


def _link(reversal: Reversal, transfer_ids: Sequence[int], role: str) -> None:
    ReversalTransfer.objects.bulk_create(
        ReversalTransfer(reversal=reversal, transfer_id=pk, role=role) for pk in transfer_ids
    )


def reversal_post(rev: Reversal) -> None:
    """Post the exact opposite of every transfer, all in one database transaction, or nothing;
    the bonus lots follow what it moves in bonus buckets."""
    transfers = Transfer.objects.filter(pk__in=rev.transfer_ids).prefetch_related(
        "entries__account"
    )
    bonus_moves: dict[int, Decimal] = defaultdict(Decimal)
    for t in transfers:
        for e in t.entries.all():
            if e.account.bucket == Bucket.BONUS:
                bonus_moves[e.account.player_id] -= e.amount.amount
    requests = [
        TransferRequest(
            kind=Transfer.Kind.REVERSAL,
            reference=references.join("reversal", t.pk),
            idempotency_key=references.join("reversal", rev.pk, t.pk),
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
    _link(rev, [p.transfer_id for p in posted], ReversalTransfer.Role.POSTED)
    bonus_follow_reversal(bonus_moves=bonus_moves, posted=posted)
