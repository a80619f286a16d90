"""Hypothesis: for any mix of satellites (seats to one target, winners who may already hold a
ticket or be registered), registrations with tickets or money, unregistrations, and the target
started (tickets refunded or lapsed) or cancelled, the tickets outstanding in the books (the
target's tickets account) equal the tickets `active` in the API, and reconcile is clean."""

import itertools
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from rummy_ledger.api.keys import api_client_create
from rummy_ledger.errors import DomainError
from tests.builders import funded_player
from tests.tournaments.tournament_builders import scheduled, table
from tests.wallets.invariants import ledger_violations
from tournaments.models import Ticket, Tournament
from tournaments.tournaments.services import entries, rounds
from tournaments.tournaments.services.tickets import tickets_outstanding
from wallets.reconciliation.runner import reconcile_run

pytestmark = pytest.mark.django_db(transaction=True)
POOL = 7
OPS = st.tuples(st.sampled_from(["ticket", "money", "unregister"]), st.integers(0, POOL - 1))
SATELLITES = st.lists(
    st.tuples(st.permutations(range(POOL)), st.integers(3, 6), st.integers(1, 2)),
    min_size=1,
    max_size=2,
)
examples = itertools.count()


def test_tickets_outstanding_in_the_books_equal_active_tickets_in_the_api(eager):
    client, key = api_client_create(name="lobby", scopes=["games"])
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Api-Key {key}")

    def active_in_api(players: list[str], slug: str) -> Decimal:
        total = Decimal("0.00")
        for p in players:
            response = api.get(f"/api/v1/players/{p}/tickets")
            assert response.status_code == 200
            total += sum(
                Decimal(t["value"])
                for t in response.json()["tickets"]
                if t["status"] == "active" and t["tournament"] == slug
            )
        return total

    @settings(
        max_examples=10,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(
        satellites=SATELLITES,
        ops=st.lists(st.lists(OPS, max_size=4), min_size=2, max_size=2),
        unused=st.sampled_from(["refund", "lapse"]),
        end=st.sampled_from(["start", "cancel", "none"]),
    )
    def run(satellites, ops, unused, end):
        n = next(examples)
        slug = f"main-{n}"
        players = [f"x{n}p{i}" for i in range(POOL)]
        for p in players:
            funded_player(p, "100.00")
        scheduled(
            slug=slug, entry_fee="20.00", rebuy=None, guarantee="0.00", min_players=2,
            max_players=6, rounds=[{"final": True}], prizes=[{"ranks": "1", "percent": "100.00"}],
            tickets_unused=unused,
        )  # fmt: skip
        target = Tournament.objects.get(slug=slug)

        def check():
            target.refresh_from_db()
            books = target.tickets_account.balance.amount
            assert books == active_in_api(players, slug)
            assert tickets_outstanding("INR")[0] == tickets_outstanding("INR")[1]

        for s, ((order, size, seats), step) in enumerate(zip(satellites, ops, strict=False)):
            sat = f"sat-{n}-{s}"
            scheduled(
                slug=sat, entry_fee="10.00", rebuy=None, guarantee=f"{seats * 20}.00",
                min_players=3, max_players=6, rounds=[{"final": True}],
                prizes=[{"ranks": f"1-{seats}", "kind": "ticket", "tournament": slug}],
            )  # fmt: skip
            seated = [players[i] for i in order[:size]]
            for p in seated:
                entries.registration_create(client=client, slug=sat, player=p)
            rounds.tournament_start(client=client, slug=sat)
            final = table("F", *((p, i + 1, 0) for i, p in enumerate(seated)))
            rounds.round_store(client=client, slug=sat, number=1, tables=[final])
            check()
            for op, who in step:
                try:
                    if op == "unregister":
                        entries.registration_withdraw(client=client, slug=slug, player=players[who])
                    else:
                        pay_with = "money" if op == "money" else ""
                        entries.registration_create(
                            client=client, slug=slug, player=players[who], pay_with=pay_with
                        )
                except DomainError:
                    pass
                check()
        if end == "start":
            rounds.tournament_start(client=client, slug=slug)
        elif end == "cancel":
            rounds.tournament_cancel(client=client, slug=slug)
        check()
        if end != "none":
            assert target.tickets_account.balance.amount == 0

    run()
    assert Ticket.objects.exists()  # every first satellite pays at least a seat
    assert ledger_violations() == []
    assert reconcile_run(trigger="command").status == "clean"
