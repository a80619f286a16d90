"""Tickets finance issues (tournaments/tournaments/services/tickets.py) and the tickets list:
an issue's own expiry, checked when proposed and approved; past it a ticket enters nothing, and
beat's job sends its value back to promotions (`expired`, once); `GET /api/v1/players/{id}/
tickets` is cursor-paged (rummy_ledger/api/paging.py)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.conf import settings
from django.utils import timezone

from rummy_ledger.celery import app as celery_app
from tests.builders import funded_player, make_api, staff
from tests.tournaments.tournament_builders import scheduled
from tests.wallets.invariants import ledger_violations
from tournaments.models import Ticket, TicketIssue, Tournament
from tournaments.tournaments.services import entries
from tournaments.tournaments.services.tickets import (
    ticket_issue_propose,
    tickets_expire,
    tickets_outstanding,
)
from wallets.errors import ProposalInvalid
from wallets.models import Entry, PlatformAccount
from wallets.services.accounts import platform_accounts
from wallets.services.proposals import proposal_decide

pytestmark = pytest.mark.django_db


@pytest.fixture
def lobby():
    api, client = make_api("games", name="lobby")
    return api, client


def target(slug: str) -> Tournament:
    return scheduled(
        slug=slug, rebuy=None, guarantee="0.00", min_players=2, max_players=6,
        rounds=[{"final": True}], prizes=[{"ranks": "1", "percent": "100.00"}],
    )  # fmt: skip


def issued(tournament: Tournament, players: list[str], expires_at) -> TicketIssue:
    """Tickets proposed by an operator, approved by an approver."""
    maker = staff(f"maker-{tournament.slug}", "finance operator")
    checker = staff(f"checker-{tournament.slug}", "finance approver")
    issue = ticket_issue_propose(
        proposed_by=maker,
        tournament=tournament,
        players=players,
        expires_at=expires_at,
        reason="Diwali promotion",
    )
    return proposal_decide(
        model=TicketIssue, proposal_id=issue.pk, decided_by=checker, approve=True
    )


def promotions_back(suffix: str) -> list[Decimal]:
    """What came back to promotions by tickets' transfers ending in `suffix`."""
    return [
        e.amount.amount
        for e in Entry.objects.filter(
            account=platform_accounts()[PlatformAccount.PROMOTIONS],
            transfer__idempotency_key__endswith=suffix,
        )
    ]


def test_the_players_tickets_are_read_page_by_page(lobby):
    # given a player holding tickets for three tournaments
    api, _ = lobby
    funded_player("p", "0")
    soon = timezone.now() + timedelta(minutes=30)
    for slug in ("t1", "t2", "t3"):
        issued(target(slug), ["p"], soon)
    ids = list(Ticket.objects.order_by("pk").values_list("pk", flat=True))

    # when it is read two at a time
    first = api.get("/api/v1/players/p/tickets?limit=2")
    second = api.get(f"/api/v1/players/p/tickets?limit=2&after={first.json()['next']}")

    # then the pages hold every ticket once, oldest first, and the last one says so
    assert first.status_code == second.status_code == 200
    assert [t["id"] for t in first.json()["tickets"]] == ids[:2]
    assert first.json()["next"] == str(ids[1])
    assert [t["id"] for t in second.json()["tickets"]] == ids[2:]
    assert second.json()["next"] is None
    whole = api.get("/api/v1/players/p/tickets").json()
    assert [t["id"] for t in whole["tickets"]] == ids and whole["next"] is None
    assert [t["tournament"] for t in whole["tickets"]] == ["t1", "t2", "t3"]


@pytest.mark.parametrize(
    ("query", "field"),
    [("limit=0", "limit"), ("limit=501", "limit"), ("after=x", "after"), ("page=2", "page")],
)
def test_a_bad_paging_parameter_is_a_400_naming_it(lobby, query, field):
    api, _ = lobby
    response = api.get(f"/api/v1/players/p/tickets?{query}")
    body = response.json()
    assert response.status_code == 400 and body["error"]["code"] == "invalid", body
    assert field in body["error"]["details"]


def test_another_clients_list_shows_none_of_them(lobby):
    funded_player("p", "0")
    issued(target("t1"), ["p"], timezone.now() + timedelta(minutes=30))
    other, _ = make_api("games", name="other-lobby")

    response = other.get("/api/v1/players/p/tickets")

    assert response.status_code == 200 and response.json() == {"tickets": [], "next": None}


@pytest.mark.parametrize(
    "expires_in",
    [timedelta(minutes=-1), timedelta(hours=2)],  # passed; after registration closes (1 h)
)
def test_an_issues_expiry_is_to_come_and_no_later_than_registration_closes(lobby, expires_in):
    tournament = target("t1")
    funded_player("p", "0")
    maker = staff("maker", "finance operator")

    with pytest.raises(ProposalInvalid) as refused:
        ticket_issue_propose(
            proposed_by=maker,
            tournament=tournament,
            players=["p"],
            expires_at=timezone.now() + expires_in,
            reason="promotion",
        )

    assert refused.value.details == {"field": "expires_at"}
    assert not TicketIssue.objects.exists()


def test_an_issue_whose_expiry_passed_before_approval_issues_nothing(lobby):
    tournament = target("t1")
    funded_player("p", "0")
    maker, checker = staff("maker", "finance operator"), staff("checker", "finance approver")
    issue = ticket_issue_propose(
        proposed_by=maker,
        tournament=tournament,
        players=["p"],
        expires_at=timezone.now() + timedelta(minutes=5),
        reason="promotion",
    )
    TicketIssue.objects.filter(pk=issue.pk).update(expires_at=timezone.now() - timedelta(seconds=1))

    with pytest.raises(ProposalInvalid):
        proposal_decide(model=TicketIssue, proposal_id=issue.pk, decided_by=checker, approve=True)

    assert not Ticket.objects.exists()
    assert promotions_back("") == []


def test_a_finance_ticket_expires_at_its_own_expiry_and_its_value_goes_back_once(lobby):
    # given a ticket issued with an expiry 10 minutes away, the target closing in an hour
    api, client = lobby
    tournament = target("t1")
    funded_player("p", "500.00")
    expiry = timezone.now() + timedelta(minutes=10)
    issued(tournament, ["p"], expiry)
    [shown] = api.get("/api/v1/players/p/tickets").json()["tickets"]
    assert shown["expires_at"] == expiry.isoformat().replace("+00:00", "Z")
    assert shown["expires_at"] != tournament.registration_closes_at.isoformat()

    # when its expiry passes (the ticket's clock moved back: its time has come)
    Ticket.objects.update(expires_at=timezone.now() - timedelta(seconds=1))

    # then it enters nothing: registering pays with money
    registration = entries.registration_create(client=client, slug="t1", player="p")
    assert registration.paid != [["ticket", "100.00"]] and registration.entry == Decimal("100.00")
    entries.registration_withdraw(client=client, slug="t1", player="p")

    # and beat's job expires it: its value from the tickets account back to promotions
    job = settings.CELERY_BEAT_SCHEDULE["tournaments-tickets-expire"]
    assert celery_app.tasks[job["task"]].apply().get() == 1
    ticket = Ticket.objects.get()
    assert (ticket.status, ticket.settled_at is not None) == (Ticket.Status.EXPIRED, True)
    assert promotions_back(":expire") == [Decimal("100.00")]
    tournament.refresh_from_db()
    assert tournament.tickets_account.balance.amount == Decimal("0.00")
    assert tickets_outstanding("INR") == (Decimal("0.00"), Decimal("0.00"))
    assert api.get("/api/v1/players/p/tickets").json()["tickets"][0]["status"] == "expired"

    # once: a second run finds nothing
    assert tickets_expire() == 0
    assert promotions_back(":expire") == [Decimal("100.00")]
    assert ledger_violations() == []


def test_a_ticket_before_its_expiry_enters_and_is_not_expired(lobby):
    # given a ticket whose expiry is to come, and another's that passed
    _, client = lobby
    tournament = target("t1")
    for p in ("p", "q"):
        funded_player(p, "500.00")
    issued(tournament, ["p", "q"], timezone.now() + timedelta(minutes=10))
    Ticket.objects.filter(player__external_id="q").update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )

    # when p registers with it and the job runs
    registration = entries.registration_create(client=client, slug="t1", player="p")
    expired = tickets_expire()

    # then p's ticket was used, only q's expired
    assert registration.paid == [["ticket", "100.00"]]
    assert expired == 1
    assert dict(Ticket.objects.values_list("player__external_id", "status")) == {
        "p": "used",
        "q": "expired",
    }
    assert ledger_violations() == []
