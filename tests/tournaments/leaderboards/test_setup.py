"""Creating a leaderboard: `manage.py create_leaderboard FILE.json` and the proposal finance
makes (approved by another person) check the same fields with the same messages; a prize table
is checked as a tournament's is; IST days only."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from tests.builders import Server, staff, template
from tests.tournaments.leaderboards.builders import board_file, ist_midnight
from tournaments.errors import TermsInvalid
from tournaments.leaderboards.services.setup import (
    leaderboard_fields_checked,
    new_leaderboard_propose,
)
from tournaments.models import Leaderboard, NewLeaderboard
from wallets.errors import SelfApproval
from wallets.roles import APPROVER, OPERATOR
from wallets.services.proposals import proposal_decide

pytestmark = pytest.mark.django_db


def leaderboard_json(tmp_path, **overrides) -> str:
    path = tmp_path / "leaderboard.json"
    path.write_text(json.dumps(board_file(**overrides)))
    return str(path)


def test_the_command_creates_it_and_refuses_what_the_admin_refuses(server, tmp_path):
    template("points-2", "points")
    out = StringIO()
    call_command("create_leaderboard", leaderboard_json(tmp_path), by="ops1", stdout=out)
    assert out.getvalue().splitlines()[-1] == "week-1"
    week = Leaderboard.objects.get()
    assert (week.client, week.created_by, week.status) == (server.client, "shell:ops1", "running")
    assert week.scoring_parameters == {"points_per_rupee": "1.00"}
    assert week.prizes[0] == {"ranks": "1", "amount": "1000.00"}
    with pytest.raises(CommandError, match="exists already"):
        call_command("create_leaderboard", leaderboard_json(tmp_path), stdout=StringIO())
    with pytest.raises(CommandError, match="an IST day's start"):
        bad = leaderboard_json(tmp_path, slug="x", starts_at="2026-11-22T00:00:00+00:00")
        call_command("create_leaderboard", bad, stdout=StringIO())
    # another client may use the same slug
    Server(name="lobby-2")
    call_command(
        "create_leaderboard", leaderboard_json(tmp_path, client="lobby-2"), stdout=StringIO()
    )
    assert Leaderboard.objects.count() == 2


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"colour": "red"}, "file", "unknown fields: colour"),
        ({"slug": "Week 1"}, "slug", "1 to 64"),
        ({"client": "nobody"}, "client", "no active API client"),
        ({"currency": "USD"}, "currency", "INR or CHP"),
        ({"ends_at": "2026-11-22"}, "ends_at", "ISO 8601"),
        ({"ends_at": ist_midnight(-6).isoformat()}, "ends_at", "after starts_at"),
        ({"ends_at": ist_midnight(100).isoformat()}, "ends_at", "at most 92 days"),
        ({"templates": []}, "templates", "at least one template or tournament"),
        ({"templates": None, "tournaments": []}, "templates", "at least one template"),
        ({"templates": "points-2"}, "templates", "at most 100 template slugs, each once"),
        ({"tournaments": ["a", "a"]}, "tournaments", "at most 100 tournament slugs, each once"),
        (
            {"tournaments": ["nope"]},
            "tournaments",
            "no tournament of this client in INR still to finish: nope",
        ),
        ({"templates": ["pool-101"]}, "templates", "no template in INR: pool-101"),
        ({"scoring": "wins"}, "scoring", '"fee" or "results"'),
        ({"scoring_parameters": {"win_divisor": "100"}}, "scoring_parameters", "only"),
        (
            {"scoring": "results", "scoring_parameters": {"win_divisor": "0"}},
            "scoring_parameters",
            "above 0",
        ),
        ({"prizes": [{"ranks": "1", "percent": "100.00"}]}, "prizes", "unknown fields: percent"),
        ({"prizes": [{"ranks": "2", "amount": "10.00"}]}, "prizes", "from 1 without gaps"),
        ({"prizes": [{"ranks": "1", "amount": "0.00"}]}, "prizes", "more than 0"),
        ({"prizes": [{"ranks": "1", "amount": 10.5}]}, "prizes", "not a decimal string"),
        (
            {"prizes": [{"ranks": "1-2", "amount": "6000000.00"}]},
            "prizes",
            "the table pays 12000000.00: at most 10000000.00",
        ),
        (
            {"prizes": [{"ranks": "1", "kind": "ticket", "tournament": "nope"}]},
            "prizes",
            "no tournament 'nope'",
        ),
    ],
)
def test_bad_fields_are_refused_naming_the_field(server, overrides, field, message):
    template("points-2", "points")
    with pytest.raises(TermsInvalid, match=message) as refused:
        leaderboard_fields_checked(board_file(**overrides))
    assert refused.value.field == field
    assert not Leaderboard.objects.exists()


def test_a_proposal_creates_it_when_another_person_approves(server):
    template("points-2", "points")
    maker, checker = staff("maker", OPERATOR), staff("checker", APPROVER)
    proposal = new_leaderboard_propose(proposed_by=maker, spec=board_file(), reason="week 48")
    assert not Leaderboard.objects.exists()
    staff_both = staff("both", OPERATOR, APPROVER)
    with pytest.raises(SelfApproval):
        own = new_leaderboard_propose(proposed_by=staff_both, spec=board_file(), reason="again")
        proposal_decide(
            model=NewLeaderboard, proposal_id=own.pk, decided_by=staff_both, approve=True
        )
    proposal_decide(model=NewLeaderboard, proposal_id=proposal.pk, decided_by=checker, approve=True)
    proposal.refresh_from_db()
    assert proposal.leaderboard.slug == "week-1"
    assert proposal.leaderboard.created_by.startswith("admin: new leaderboard")
