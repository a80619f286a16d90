"""A tournament's money terms change only by maker-checker, and only before anyone registers."""

from decimal import Decimal

import pytest

from rummy_ledger.api.keys import api_client_create
from tests.builders import funded_player
from tests.tournaments.tournament_builders import scheduled
from tournaments.models import Tournament, TournamentChange
from tournaments.tournaments.services import entries
from tournaments.tournaments.services.terms_changes import tournament_change_propose
from wallets.errors import PermissionRefused, ProposalInvalid
from wallets.services.proposals import proposal_decide

PRIZES = [{"ranks": "1", "percent": "60.00"}, {"ranks": "2-3", "percent": "20.00"}]


def propose(user, tournament, **terms):
    fields = {
        "entry_fee": Decimal("200.00"),
        "fee_percent": Decimal("12.50"),
        "guarantee": Decimal("1000.00"),
        "rebuy": None,
        "prizes": PRIZES,
        "reason": "bigger Sunday",
    }
    fields.update(terms)
    return tournament_change_propose(proposed_by=user, tournament=tournament, **fields)


@pytest.fixture
def tournament(db):
    api_client_create(name="lobby", scopes=["games"])
    return scheduled()


def test_terms_apply_when_another_person_approves(operator, approver, tournament):
    change = propose(operator, tournament)
    tournament.refresh_from_db()
    assert tournament.entry_fee == Decimal("100.00")  # nothing until approved
    with pytest.raises(PermissionRefused):  # the proposer cannot decide
        proposal_decide(
            model=TournamentChange, proposal_id=change.pk, decided_by=operator, approve=True
        )
    proposal_decide(
        model=TournamentChange, proposal_id=change.pk, decided_by=approver, approve=True
    )
    tournament = Tournament.objects.get()
    t = tournament
    assert (t.entry_fee, t.fee_percent, t.guarantee, t.rebuy) == (
        Decimal("200.00"), Decimal("12.50"), Decimal("1000.00"), None,
    )  # fmt: skip
    assert [(p.rank_from, p.rank_to, p.percent) for p in tournament.prizes.all()] == [
        (1, 1, Decimal("60.00")),
        (2, 3, Decimal("20.00")),
    ]


def test_refusals_use_the_schedulers_messages(operator, approver, viewer, tournament):
    with pytest.raises(PermissionRefused):
        propose(viewer, tournament)
    with pytest.raises(ProposalInvalid, match=r"add up to 80\.00, not exactly 100"):
        propose(operator, tournament, prizes=[*PRIZES[:1], {"ranks": "2", "percent": "20.00"}])
    with pytest.raises(ProposalInvalid, match="nothing changes"):
        propose(
            operator,
            tournament,
            entry_fee=Decimal("100.00"),
            fee_percent=Decimal("15.00"),
            guarantee=Decimal("500.00"),
            rebuy={"price": "50.00", "max_per_player": 2, "until_round": 1},
            prizes=[
                {"ranks": "1", "percent": "50.00"},
                {"ranks": "2-3", "percent": "25.00"},
            ],
        )


def test_once_anyone_registered_the_terms_are_fixed(operator, approver, tournament):
    change = propose(operator, tournament)
    funded_player("a", "500.00")
    entries.registration_create(client=tournament.client, slug=tournament.slug, player="a")
    with pytest.raises(ProposalInvalid, match="no longer change"):
        proposal_decide(
            model=TournamentChange, proposal_id=change.pk, decided_by=approver, approve=True
        )
    with pytest.raises(ProposalInvalid, match="no longer change"):
        propose(operator, tournament)
    assert Tournament.objects.get().entry_fee == Decimal("100.00")
