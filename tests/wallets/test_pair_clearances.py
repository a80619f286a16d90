"""Finance clears a flagged pair through maker-checker (`wallets.services.pair_clearances`):
proposed with a reason by one person, cleared only when another approves; a cleared pair, a
pair of an older report or one with a clearance waiting is refused, and nothing is written."""

import pytest

from tests.builders import flagged_pair, funded_player, staff
from wallets.errors import PermissionRefused, ProposalInvalid, SelfApproval
from wallets.models import FlaggedPair, PairClearance
from wallets.roles import APPROVER, OPERATOR, VIEWER
from wallets.services.flows import players_under_review
from wallets.services.pair_clearances import pair_clearance_propose
from wallets.services.proposals import proposal_decide

pytestmark = pytest.mark.django_db


@pytest.fixture
def pair() -> FlaggedPair:
    for player in ("a", "b"):
        funded_player(player, "0")
    return flagged_pair("a", "b")


def decide(clearance: PairClearance, user, approve: bool = True) -> None:
    proposal_decide(model=PairClearance, proposal_id=clearance.pk, decided_by=user, approve=approve)


def test_a_pair_is_cleared_only_when_another_person_approves(pair):
    maker, checker = staff("maker", OPERATOR, APPROVER), staff("checker", APPROVER)
    ids = [pair.loser_id, pair.winner_id]
    clearance = pair_clearance_propose(proposed_by=maker, pair=pair, reason="reviewed: friends")
    assert players_under_review(player_ids=ids) == set(ids)  # proposing changes nothing
    with pytest.raises(SelfApproval):
        decide(clearance, maker)
    decide(clearance, checker)
    pair.refresh_from_db()
    assert pair.review == FlaggedPair.Review.CLEARED
    assert players_under_review(player_ids=ids) == set()
    with pytest.raises(ProposalInvalid, match="cleared already"):
        pair_clearance_propose(proposed_by=maker, pair=pair, reason="again")


def test_a_rejected_clearance_leaves_the_pair_under_review(pair):
    clearance = pair_clearance_propose(
        proposed_by=staff("maker", OPERATOR), pair=pair, reason="reviewed"
    )
    decide(clearance, staff("checker", APPROVER), approve=False)
    pair.refresh_from_db()
    assert pair.review == FlaggedPair.Review.UNDER_REVIEW


def test_refusals_write_nothing(pair):
    maker = staff("maker", OPERATOR)
    with pytest.raises(PermissionRefused):
        pair_clearance_propose(proposed_by=staff("viewer", VIEWER), pair=pair, reason="x")
    with pytest.raises(ProposalInvalid, match="needs a reason"):
        pair_clearance_propose(proposed_by=maker, pair=pair, reason="  ")
    waiting = pair_clearance_propose(proposed_by=maker, pair=pair, reason="reviewed")
    with pytest.raises(ProposalInvalid, match=f"waiting for approval already \\(#{waiting.pk}\\)"):
        pair_clearance_propose(proposed_by=maker, pair=pair, reason="twice")
    newer = flagged_pair("b", "a")  # a newer report: the old one's pairs decide nothing
    with pytest.raises(ProposalInvalid, match="not in the latest one-way-flow report"):
        pair_clearance_propose(proposed_by=maker, pair=pair, reason="x")
    assert PairClearance.objects.count() == 1 and newer.review == "under_review"
