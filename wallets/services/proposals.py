"""Maker-checker: an operator proposes, a different approver approves or rejects.

Adjustments, reversals and bonus grants move money only when approved; a withdrawal review
moves it either way (approval pays it out, rejection returns it to winnings:
`wallets.services.withdrawals`).
`proposal_decide` is the one decision: it locks the proposal row, re-reads it and refuses a
proposal already decided (`AlreadyDecided`, saying by whom, when and how), and posts with
idempotency keys derived from the proposal: deciding twice (two clicks, two approvers at once)
posts once, and only the first decision is recorded.

This module is the engine (register a kind, decide, who may); every kind of proposal is a
concrete `Proposal` that lives with its subject and is registered with what its approval (and,
where it does anything, its rejection) does (a `ProposalKind`, registered as `proposal_kinds`
through `rummy_ledger/plugins.py`) from its app's AppConfig.ready(): adjustments
(`services/adjustments.py`), reversals (`services/reversals.py`), bonus grants
(`services/bonuses.py`), withdrawal reviews (`services/withdrawals.py`), a game template's money
terms (tournaments), so this module names no kind's model. After a decision,
`wallets.signals.proposal_decided` tells whoever listens (a game reversed as a whole says so),
in the same transaction. Each proposal made and each decision is a row of the staff audit list
(`rummy_ledger.staff.audit`), in the same transaction too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models.signals import post_save
from django.utils import timezone

from rummy_ledger.staff.audit import audit_record
from rummy_ledger.staff.models import AuditKind
from wallets import signals
from wallets.errors import AlreadyDecided, PermissionRefused, ProposalInvalid, SelfApproval
from wallets.models import Proposal, ProposalStatus
from wallets.money.formatting import ist

ApproveAction = Callable[[Proposal], None]
_ON_APPROVE: dict[type[Proposal], ApproveAction] = {}
_ON_REJECT: dict[type[Proposal], ApproveAction] = {}


@dataclass(frozen=True)
class ProposalKind:
    """A decidable model: `on_approve(proposal)` does what approving it does (post the money,
    apply the terms) inside the decision's transaction, and raises a `DomainError` to refuse;
    `on_reject`, when given, what rejecting it does besides recording it."""

    model: type[Proposal]
    on_approve: ApproveAction
    on_reject: ApproveAction | None = None


def proposal_kind_register(kind: ProposalKind) -> None:
    """Offered as `proposal_kinds` (`rummy_ledger/plugins.py`). Each proposal of the kind made
    is in the staff audit list, as each decision is (`proposal_decide`)."""
    _ON_APPROVE[kind.model] = kind.on_approve
    post_save.connect(_proposal_audit, sender=kind.model, dispatch_uid=f"audit-{kind.model._meta}")
    if kind.on_reject is not None:
        _ON_REJECT[kind.model] = kind.on_reject


def proposal_kinds() -> list[type[Proposal]]:
    """Every kind of proposal that can be decided, in the order registered."""
    return list(_ON_APPROVE)


def permission_required(user: AbstractBaseUser, perm: str) -> None:
    if not user.has_perm(perm):
        raise PermissionRefused(f"you lack the permission {perm}")


def reason_required(reason: str, what: str) -> str:
    if not reason.strip():
        raise ProposalInvalid(f"{what} needs a reason")
    return reason.strip()


def _proposal_audit(sender, instance: Proposal, created: bool, **kwargs) -> None:
    if created:
        audit_record(
            AuditKind.PROPOSAL,
            actor=instance.proposed_by,
            subject=_audit_subject(instance),
            detail=instance.reason,
        )


def _audit_subject(proposal: Proposal) -> str:
    return f"{proposal._meta.verbose_name} #{proposal.pk}"


# --- deciding -----------------------------------------------------------------------------------


@transaction.atomic
def proposal_decide(
    *,
    model: type[Proposal],
    proposal_id: int,
    decided_by: AbstractBaseUser,
    approve: bool,
    note: str = "",
) -> Proposal:
    """Approve (posting its money, once) or reject a proposal; never by its proposer."""
    permission_required(decided_by, model.approve_permission)
    proposal = model.objects.select_for_update().get(pk=proposal_id)
    if proposal.proposed_by_id == decided_by.pk:
        raise SelfApproval("a proposal is approved or rejected by someone other than its proposer")
    if proposal.status != ProposalStatus.PROPOSED:
        raise _already_decided(proposal)
    wanted = ProposalStatus.APPROVED if approve else ProposalStatus.REJECTED
    if approve:
        _ON_APPROVE[model](proposal)
    elif model in _ON_REJECT:
        _ON_REJECT[model](proposal)
    proposal.status = wanted
    proposal.decided_by = decided_by
    proposal.decided_at = timezone.now()
    proposal.decision_note = note.strip()[:255]
    proposal.save(update_fields=["status", "decided_by", "decided_at", "decision_note"])
    signals.proposal_decided.send(sender=model, proposal=proposal, approved=approve)
    audit_record(
        AuditKind.APPROVAL if approve else AuditKind.REJECTION,
        actor=decided_by,
        subject=_audit_subject(proposal),
        detail=proposal.decision_note,
    )
    return proposal


def _already_decided(proposal: Proposal) -> AlreadyDecided:
    """The refusal of a second decision: it names the first, and changes nothing."""
    return AlreadyDecided(
        f"{proposal._meta.verbose_name} #{proposal.pk} was already {proposal.status} by "
        f"{proposal.decided_by} at {ist(proposal.decided_at)}: nothing was done",
        details={"status": proposal.status},
    )
