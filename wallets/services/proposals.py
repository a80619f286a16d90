"""Maker-checker: an operator proposes, a different approver approves or rejects.

Adjustments, reversals and bonus grants move money only when approved; a withdrawal review
moves it either way (approval pays it out, rejection returns it to winnings:
`wallets.services.withdrawals`).
`proposal_decide` is the one decision: it locks the proposal row, re-reads it and refuses a
proposal already decided (`AlreadyDecided`, saying by whom, when and how), and posts with
idempotency keys derived from the proposal: deciding twice (two clicks, two approvers at once)
posts once, and only the first decision is recorded.

Every kind of proposal is a concrete `Proposal` registered here with what its approval (and,
where it does anything, its rejection) does (`proposal_kind_register`): adjustments, reversals,
bonus grants and withdrawal reviews by this module, other apps' kinds (a game template's money
terms) from their AppConfig.ready(), so this module names no other app's models. After a decision,
`wallets.signals.proposal_decided` tells whoever listens (a game reversed as a whole says so),
in the same transaction.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from djmoney.money import Money

from wallets import references, signals
from wallets.errors import (
    AlreadyDecided,
    AlreadyReversed,
    InsufficientFunds,
    PermissionRefused,
    ProposalInvalid,
    SelfApproval,
)
from wallets.formatting import ist, money
from wallets.models import (
    BUCKET_CURRENCY,
    Account,
    Adjustment,
    BonusGrant,
    BonusLot,
    Bucket,
    PlatformAccount,
    Player,
    Proposal,
    ProposalStatus,
    Reversal,
    ReversalTransfer,
    Transfer,
    WithdrawalReview,
)
from wallets.money import money_checked
from wallets.services import withdrawals
from wallets.services.bonuses import bonus_follow_reversal, bonus_grant
from wallets.services.ledger import Leg, TransferRequest, transfers_post
from wallets.services.players import platform_accounts

ApproveAction = Callable[[Proposal], None]
_ON_APPROVE: dict[type[Proposal], ApproveAction] = {}
_ON_REJECT: dict[type[Proposal], ApproveAction] = {}


def proposal_kind_register(
    model: type[Proposal], *, on_approve: ApproveAction, on_reject: ApproveAction | None = None
) -> None:
    """Make `model` decidable: `on_approve(proposal)` does what approving it does (post the money,
    apply the terms) inside the decision's transaction, and raises a `DomainError` to refuse;
    `on_reject`, when given, what rejecting it does besides recording it."""
    _ON_APPROVE[model] = on_approve
    if on_reject is not None:
        _ON_REJECT[model] = on_reject


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


# --- proposing ----------------------------------------------------------------------------------


def adjustment_checked(*, player: Player, bucket: str, direction: str, amount: Money) -> Money:
    """The amount in the bucket's currency, or `ProposalInvalid` saying why no approver could
    ever approve it: a debit of more than the bucket holds now is refused at once (approval
    checks again, against the balance then)."""
    currency = BUCKET_CURRENCY.get(bucket)
    if currency is None:
        raise ProposalInvalid(f"unknown bucket {bucket!r}")
    if bucket == Bucket.PENDING:
        raise ProposalInvalid("pending withdrawals move only with their withdrawal")
    if bucket == Bucket.BONUS:
        raise ProposalInvalid("bonus is credited by a bonus grant (it expires), not adjusted")
    if direction not in Adjustment.Direction.values:
        raise ProposalInvalid(f"direction must be credit or debit, not {direction!r}")
    amount = money_checked(Money(amount.amount, currency))
    if amount.amount <= 0:
        raise ProposalInvalid("an adjustment moves a positive amount; choose credit or debit")
    if direction == Adjustment.Direction.DEBIT:
        account = Account.objects.get(player=player, bucket=bucket, kind=Account.Kind.PLAYER)
        if amount > account.balance:
            raise ProposalInvalid(
                f"refused: debiting {money(amount)} would take {account.code} below zero "
                f"(it holds {money(account.balance)})",
                details={"accounts": [account.code]},
            )
    return amount


def adjustment_propose(
    *,
    proposed_by: AbstractBaseUser,
    player: Player,
    bucket: str,
    direction: str,
    amount: Money,
    reason: str,
) -> Adjustment:
    permission_required(proposed_by, "wallets.add_adjustment")
    amount = adjustment_checked(player=player, bucket=bucket, direction=direction, amount=amount)
    return Adjustment.objects.create(
        player=player,
        bucket=bucket,
        direction=direction,
        amount=amount,
        reason=reason_required(reason, "an adjustment"),
        proposed_by=proposed_by,
    )


def bonus_grant_propose(
    *, proposed_by: AbstractBaseUser, player: Player, amount: Money, reason: str
) -> BonusGrant:
    permission_required(proposed_by, "wallets.add_bonusgrant")
    amount = money_checked(Money(amount.amount, BUCKET_CURRENCY[Bucket.BONUS]))
    if amount.amount <= 0:
        raise ProposalInvalid("a bonus grant credits a positive amount")
    return BonusGrant.objects.create(
        player=player,
        amount=amount,
        reason=reason_required(reason, "a bonus grant"),
        proposed_by=proposed_by,
    )


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


@transaction.atomic
def withdrawal_review_propose(
    *, proposed_by: AbstractBaseUser, withdrawal_id: int, reason: str
) -> WithdrawalReview:
    """An operator has checked a withdrawal that waits for approval (the player, the KYC, the
    tax position) and hands it to an approver."""
    permission_required(proposed_by, "wallets.add_withdrawalreview")
    reason = reason_required(reason, "a review")
    withdrawal = withdrawals.withdrawal_for_review(withdrawal_id=withdrawal_id)
    return WithdrawalReview.objects.create(
        withdrawal=withdrawal, reason=reason, proposed_by=proposed_by
    )


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
    return proposal


def _already_decided(proposal: Proposal) -> AlreadyDecided:
    """The refusal of a second decision: it names the first, and changes nothing."""
    return AlreadyDecided(
        f"{proposal._meta.verbose_name} #{proposal.pk} was already {proposal.status} by "
        f"{proposal.decided_by} at {ist(proposal.decided_at)}: nothing was done",
        details={"status": proposal.status},
    )


def adjustment_approve(*, adjustment_id: int, approved_by: AbstractBaseUser, note: str = ""):
    return proposal_decide(
        model=Adjustment, proposal_id=adjustment_id, decided_by=approved_by, approve=True, note=note
    )


def adjustment_reject(*, adjustment_id: int, rejected_by: AbstractBaseUser, note: str = ""):
    return proposal_decide(
        model=Adjustment,
        proposal_id=adjustment_id,
        decided_by=rejected_by,
        approve=False,
        note=note,
    )


def reversal_approve(*, reversal_id: int, approved_by: AbstractBaseUser, note: str = ""):
    return proposal_decide(
        model=Reversal, proposal_id=reversal_id, decided_by=approved_by, approve=True, note=note
    )


def reversal_reject(*, reversal_id: int, rejected_by: AbstractBaseUser, note: str = ""):
    return proposal_decide(
        model=Reversal, proposal_id=reversal_id, decided_by=rejected_by, approve=False, note=note
    )


def _post_adjustment(adj: Adjustment) -> None:
    """Post the adjustment against the `adjustments` platform account (chips: chips issuance)."""
    account = Account.objects.get(
        player_id=adj.player_id, bucket=adj.bucket, kind=Account.Kind.PLAYER
    )
    sink = platform_accounts()[PlatformAccount.ADJUSTMENTS]
    if str(adj.amount.currency) != str(sink.balance.currency):
        sink = platform_accounts()[PlatformAccount.CHIPS_ISSUANCE]  # chips are never cash
    signed = adj.amount if adj.direction == Adjustment.Direction.CREDIT else -adj.amount
    key = references.join("adjustment", adj.pk)
    request = TransferRequest(
        kind=Transfer.Kind.ADJUSTMENT,
        reference=key,
        idempotency_key=key,
        legs=[Leg(account.pk, signed), Leg(sink.pk, -signed)],
        memo=adj.reason[:255],
    )
    try:
        posted = transfers_post(requests=[request])[0]
    except InsufficientFunds as exc:
        raise InsufficientFunds(
            f"refused: debiting {money(adj.amount)} would take {account.code} below zero "
            f"(it holds {money(account.balance)})",
            details={"accounts": [account.code]},
        ) from exc
    adj.transfer_id = posted.transfer_id
    adj.save(update_fields=["transfer"])


def _post_bonus_grant(grant: BonusGrant) -> None:
    key = references.join("bonus-grant", grant.pk)
    posted = bonus_grant(
        player=grant.player,
        amount=grant.amount,
        source=BonusLot.Source.GRANT,
        reference=key,
        idempotency_key=key,
        memo=grant.reason[:255],
    )
    grant.transfer_id = posted.transfer_id
    grant.save(update_fields=["transfer"])


def _post_reversal(rev: Reversal) -> None:
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


proposal_kind_register(Adjustment, on_approve=_post_adjustment)
proposal_kind_register(Reversal, on_approve=_post_reversal)
proposal_kind_register(BonusGrant, on_approve=_post_bonus_grant)
proposal_kind_register(
    WithdrawalReview,
    on_approve=withdrawals.review_approved,
    on_reject=withdrawals.review_rejected,
)
