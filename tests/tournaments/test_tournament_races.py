"""Races with real concurrent connections (threads against the live server, one database
connection each) and the prizes paid by a REAL Celery worker exactly once."""

import threading
import time
from decimal import Decimal

import pytest

from tests.builders import funded_player
from tests.tournaments.tournament_builders import Lobby, scheduled, table
from tests.tournaments.worker import Worker, private_queue, wait_until
from tests.wallets.invariants import ledger_violations
from tournaments.models import Registration, Tournament
from tournaments.tasks import settle_waiting_rounds
from wallets.models import Transfer

pytestmark = pytest.mark.django_db(transaction=True)
BUSY = {"busy", "ledger_busy", "request_in_flight"}


def at_once(calls) -> list:
    """Run the calls in threads released together; their (status, body), retried while busy."""
    results = [None] * len(calls)
    gate = threading.Barrier(len(calls))

    def run(i, call):
        gate.wait()
        for _ in range(50):
            status, body = call()
            if status != 409 or body["error"]["code"] not in BUSY:
                break
            time.sleep(0.05)
        results[i] = (status, body)

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


@pytest.fixture
def lobby(live_server):
    return Lobby(live_server.url)


def test_sixty_registrations_for_fifty_seats(lobby, eager):
    scheduled(max_players=50)
    players = [f"r{n:02d}" for n in range(60)]
    for p in players:
        funded_player(p, "200.00")
    results = at_once([lambda p=p: lobby.register("sunday-100", p) for p in players])
    statuses = sorted(s for s, _ in results)
    assert statuses.count(201) == 50
    refused = [b["error"]["code"] for s, b in results if s != 201]
    assert refused == ["tournament_full"] * 10
    assert Registration.objects.filter(status="registered").count() == 50
    assert lobby.get("sunday-100")[1]["collected"] == "5000.00"
    assert ledger_violations() == []


def test_one_player_registering_twice_at_once_pays_once(lobby, eager):
    scheduled()
    funded_player("twice", "500.00")
    results = at_once([lambda: lobby.register("sunday-100", "twice") for _ in range(6)])
    assert sorted(s for s, _ in results) == [201] + [409] * 5
    assert {b["error"]["code"] for s, b in results if s == 409} == {"already_registered"}
    assert Transfer.objects.filter(kind="entry", reference__startswith="tournament:").count() == 1


def test_an_unregistration_racing_the_start_is_refunded_or_playing_never_both(lobby, eager):
    outcomes = set()
    for n in range(6):
        slug = f"race-{n}"
        scheduled(slug=slug, min_players=2, prizes=[{"ranks": "1", "percent": "100.00"}])
        for p in ("x", "y", "z"):
            funded_player(f"{p}{n}", "100.00")
            assert lobby.register(slug, f"{p}{n}")[0] == 201
        (u_status, u_body), (s_status, _) = at_once(
            [lambda s=slug, n=n: lobby.unregister(s, f"x{n}"), lambda s=slug: lobby.start(s)]
        )
        assert s_status == 200
        registration = Registration.objects.filter(
            tournament__slug=slug, player__external_id=f"x{n}"
        ).get()
        balance = funded_player(f"x{n}", "0")["deposit"].balance.amount
        if u_status == 200:
            assert (registration.status, balance) == ("unregistered", Decimal("100.00"))
            outcomes.add("refunded")
        else:
            assert u_body["error"]["code"] == "registration_closed"
            assert (registration.status, balance) == ("registered", Decimal("0.00"))
            outcomes.add("playing")
        assert Tournament.objects.get(slug=slug).status == "running"
    assert ledger_violations() == []


def test_a_real_worker_pays_the_prizes_once_whatever_runs_twice(lobby):
    scheduled(rounds=[{"final": True}], max_players=6, rebuy=None, guarantee="1000.00")
    with private_queue() as queue:
        worker = Worker(queue)
        try:
            for p in ("a", "b", "c", "d"):
                funded_player(p, "500.00")
                assert lobby.register("sunday-100", p)[0] == 201
            assert lobby.start("sunday-100")[0] == 200
            final = [table("F", ("d", 1, 0), ("c", 2, 0), ("b", 3, 0), ("a", 4, 0))]
            assert lobby.round("sunday-100", 1, final)[0] == 202
            assert wait_until(lambda: lobby.get("sunday-100")[1]["settled"], timeout=60)
            for _ in range(3):  # duplicate wakes
                settle_waiting_rounds.delay()
            time.sleep(2)
        finally:
            worker.stop()
    t = lobby.get("sunday-100")[1]
    assert (t["status"], t["overlay"], t["prize_pool"]) == ("finished", "660.00", "1000.00")
    payout = Transfer.objects.filter(kind="settlement", reference__startswith="tournament:")
    winners = Registration.objects.filter(prize__gt=0).count()
    assert (winners, payout.count()) == (3, 4)  # the fee and each prize, paid once
    assert funded_player("d", "0")["winnings"].balance.amount == Decimal("500.00")
    assert ledger_violations() == []
