"""Finance clears a flagged pair (`PairClearance`, maker-checker): clearing lets its players win
promotions' prizes again (a leaderboard's payout skips a player in a pair of the latest
one-way-flow report still `under_review`: `flows.players_under_review`), so it changes who is
paid and an operator proposes it with a reason, another person approves. Only a pair of the
latest report can be cleared (an older report's pairs no longer decide anything), and only
once; approving re-checks that the pair is not cleared, under the pair's lock."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from wallets.errors import ProposalInvalid
from wallets.models import FlaggedPair, FlowReport, PairClearance, ProposalStatus
from wallets.services.proposals import permission_required, reason_required


def _not_cleared(pair: FlaggedPair) -> None:
    if pair.review == FlaggedPair.Review.CLEARED:
        raise ProposalInvalid(f"pair #{pair.pk} is cleared already", details={"pair": pair.pk})


def pair_clearable_checked(pair: FlaggedPair) -> FlaggedPair:
    """The pair, or `ProposalInvalid` saying why it cannot be cleared."""
    details = {"pair": pair.pk}
    _not_cleared(pair)
    latest = FlowReport.objects.order_by("-started_at", "-pk").values_list("pk", flat=True)[:1]
    if pair.report_id not in list(latest):
        raise ProposalInvalid(
            f"pair #{pair.pk} is not in the latest one-way-flow report: only its pairs count",
            details=details,
        )
    open_ = PairClearance.objects.filter(pair=pair, status=ProposalStatus.PROPOSED).first()
    if open_ is not None:
        raise ProposalInvalid(
            f"pair #{pair.pk} has a clearance waiting for approval already (#{open_.pk})",
            details=details,
        )
    return pair


def pair_clearance_propose(
    *, proposed_by: AbstractBaseUser, pair: FlaggedPair, reason: str
) -> PairClearance:
    permission_required(proposed_by, "wallets.add_pairclearance")
    return PairClearance.objects.create(
        pair=pair_clearable_checked(pair),
        reason=reason_required(reason, "clearing a flagged pair"),
        proposed_by=proposed_by,
    )


def pair_clearance_approved(clearance: PairClearance) -> None:
    """What approving does, in the decision's transaction: the pair, locked, is cleared."""
    pair = FlaggedPair.objects.select_for_update().get(pk=clearance.pair_id)
    _not_cleared(pair)
    pair.review = FlaggedPair.Review.CLEARED
    pair.save(update_fields=["review"])
