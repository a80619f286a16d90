"""`POST /api/v1/deals` (docs/api.md "Batches of deals") over real HTTP against the live server: a
result per deal in the order posted, each deal checked and stored on its own, settled by a real
Celery worker; the answer replays for its key unless a deal met contention; the 1 MiB body limit of
this endpoint alone; 1 to 100 deals; and the settlement of a batch's message."""

from __future__ import annotations

import copy
import json
import threading
from contextlib import contextmanager
from decimal import Decimal

import pytest
from django.db import connection, transaction
from drf_spectacular.generators import SchemaGenerator

from tests.architecture.test_openapi import _as_json_schema, conforms
from tests.builders import (
    LOSER_22,
    LOSER_50,
    WINNER,
    HttpApi,
    books_balance_for,
    funded_player,
    make_api,
    res,
    template,
)
from tests.tournaments.worker import Worker, private_queue, wait_until
from tests.wallets.invariants import ledger_violations
from tournaments.games.services.intake import deal_store
from tournaments.games.services.opening import game_open
from tournaments.games.services.settlement import waiting_settle
from tournaments.models import Deal, Game

pytestmark = pytest.mark.django_db(transaction=True)
BATCH = "/api/v1/deals"


@pytest.fixture(scope="module")
def openapi():
    return _as_json_schema(SchemaGenerator().get_schema(request=None, public=True))


@pytest.fixture(autouse=True)
def no_time_limit(settings):
    """A loaded machine must not turn a deal into `busy` (out of time) or cut a request at its
    deadline: the time limit has a test of its own (out_of_time_then_retried)."""
    settings.API_BATCH_SECONDS = settings.REQUEST_DEADLINE_SECONDS = 120


@pytest.fixture
def servers(live_server):
    """Two game servers (clients) over HTTP, and 3-player points games: g0..g6 of the first,
    theirs-0 of the second."""
    template("points-1", "points", point_value=Decimal("1.00"), fee_percent=Decimal("12.5"))
    ours = HttpApi(live_server.url, "games", name="ours")
    theirs = HttpApi(live_server.url, "games", name="theirs")
    for server, game_id in [*((ours, f"g{n}") for n in range(7)), (theirs, "theirs-0")]:
        players = [f"{game_id}p{i}" for i in range(3)]
        for player in players:
            funded_player(player, "100.00")
        game_open(client=server.client, game_id=game_id, template_slug="points-1", players=players)
    template("pool-101", "pool101", entry_fee=Decimal("10.00"))
    for player in ("x", "y"):
        funded_player(player, "50.00")
    game_open(client=ours.client, game_id="pool", template_slug="pool-101", players=["x", "y"])
    return ours, theirs


def pool_deal(deal_no: int) -> dict:
    """x shows, y shows wrong (80 points): y is out of the pool after two such deals."""
    results = [res("x", "declared", WINNER), res("y", "wrong_show")]
    return copy.deepcopy(
        {"game_id": "pool", "deal_no": deal_no, "wild_joker": "KD", "results": results}
    )


def deal(game_id: str, deal_no: int = 1, second: str = "lost") -> dict:
    p = [f"{game_id}p{i}" for i in range(3)]
    results = [res(p[0], "declared", WINNER), res(p[1], "lost", LOSER_22)]
    results.append(res(p[2], second, LOSER_50 if second == "lost" else None))
    body = {"game_id": game_id, "deal_no": deal_no, "wild_joker": "KD", "results": results}
    return copy.deepcopy(body)  # a test may spoil a card of its own copy


def summary(response) -> list[tuple]:
    return [
        (r["game_id"], r["deal_no"], r["status"], r.get("deal_status") or r["error"]["code"])
        for r in response.json()["results"]
    ]


def test_a_batch_is_answered_deal_by_deal_and_settled_by_a_real_worker(servers, settings, openapi):
    ours, _ = servers
    bad_card = deal("g1")
    bad_card["results"][1]["groups"][0][0] = "11H"
    batch = [
        deal("g0"),
        {**deal("g1"), "tip": 1},  # an unknown field: this deal alone is refused
        bad_card,
        deal("theirs-0"),  # another client's game does not exist for this one
        deal("g2", 2),  # out of order: g2 has no deal 1 yet
        deal("g1"),
        deal("g0", 1, second="first_drop"),  # g0's deal 1 again, with other content
        "not a deal",
        deal("g2", 1, second="middle_drop"),
        pool_deal(1),  # two deals of one game: the earlier first
        pool_deal(2),
    ]
    with private_queue() as queue:
        worker = Worker(queue, concurrency=1)
        try:
            response = ours.post("deals", {"deals": batch}, key="batch-1")
            assert response.status_code == 200, response.text
            assert summary(response) == [
                ("g0", 1, 202, "stored"),
                ("g1", 1, 400, "invalid"),
                ("g1", 1, 400, "invalid_card"),
                ("theirs-0", 1, 404, "game_not_found"),  # another client's game
                ("g2", 2, 409, "deal_out_of_order"),
                ("g1", 1, 202, "stored"),
                ("g0", 1, 409, "deal_exists"),
                (None, None, 400, "invalid"),
                ("g2", 1, 202, "stored"),
                ("pool", 1, 202, "stored"),
                ("pool", 2, 202, "stored"),
            ]
            assert "Retry-After" not in response.headers
            conforms(openapi, BATCH, "post", response)
            assert wait_until(no_deal_stored, 60), "the batch was not settled by the worker"
            conforms(openapi, BATCH, "post", busy_then_retried(ours, settings))
            out_of_time_then_retried(ours, settings)
            assert wait_until(no_deal_stored, 60), "the retry was not settled by the worker"
        finally:
            worker.stop()
    assert response.json()["results"][1]["error"]["details"] == {
        "tip": ["Unknown field: this operation does not take it."]
    }
    assert sorted(Deal.objects.values_list("game__game_id", "deal_no")) == [
        ("g0", 1),
        ("g1", 1),
        ("g2", 1),
        ("g3", 1),
        ("g4", 1),
        ("g5", 1),
        ("g6", 1),
        ("pool", 1),
        ("pool", 2),
    ]
    for game in Game.objects.filter(client=ours.client):
        assert game.status == Game.Status.FINISHED
        books_balance_for(game)
    assert ours.send("GET", "games/pool").json()["paid_out"] == "18.00"  # 2 x 10 less 10 %
    assert Game.objects.get(game_id="theirs-0").status == Game.Status.OPEN
    assert ledger_violations() == []

    # the same key: the same answer, byte for byte; the same deals under a new key: replays
    again = ours.post("deals", {"deals": batch}, key="batch-1")
    assert again.headers["Idempotent-Replayed"] == "true" and again.content == response.content
    repeat = ours.post("deals", {"deals": [deal("g0"), deal("g1")]})
    assert summary(repeat) == [("g0", 1, 202, "settled"), ("g1", 1, 202, "settled")]
    assert Deal.objects.count() == 9


@contextmanager
def game_locked(game_id: str):
    """Another transaction (a thread with its own connection) holds the game's row lock."""
    locked, release = threading.Event(), threading.Event()

    def hold():
        with transaction.atomic():
            Game.objects.select_for_update().get(game_id=game_id)
            locked.set()
            release.wait(30)
        connection.close()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert locked.wait(10)
        yield
    finally:
        release.set()
        holder.join()


def no_deal_stored() -> bool:
    return not Deal.objects.filter(status=Deal.Status.STORED).exists()


def busy_then_retried(server: HttpApi, settings):
    """A deal whose game another transaction holds is 409 `busy` in a 200 with `Retry-After`:
    the others are stored, the answer is not remembered, and the retry with its key runs again."""
    settings.REQUEST_LOCK_TIMEOUT_MS = 200
    batch = {"deals": [deal("g3"), deal("g4")]}
    with game_locked("g3"):
        first = server.post("deals", batch, key="batch-busy")
    assert first.status_code == 200 and first.headers["Retry-After"] == "1"
    assert summary(first) == [("g3", 1, 409, "busy"), ("g4", 1, 202, "stored")]
    assert not Deal.objects.filter(game__game_id="g3").exists()

    retry = server.post("deals", batch, key="batch-busy")  # runs again: not a replay
    assert "Idempotent-Replayed" not in retry.headers and "Retry-After" not in retry.headers
    assert [r[2] for r in summary(retry)] == [202, 202]  # g4's: a replay of the stored deal
    third = server.post("deals", batch, key="batch-busy")  # now remembered
    assert third.headers["Idempotent-Replayed"] == "true" and third.content == retry.content
    return first


def out_of_time_then_retried(server: HttpApi, settings) -> None:
    """Past API_BATCH_SECONDS a batch tries no more deals (once one did some work, so that
    every retry makes progress): the rest are 409 `busy`, retried."""
    settings.API_BATCH_SECONDS = 0
    batch = {"deals": [deal("g5"), deal("g6"), deal("g6", 1, second="first_drop")]}
    first = server.post("deals", batch, key="batch-late")
    assert summary(first) == [
        ("g5", 1, 202, "stored"),
        ("g6", 1, 409, "busy"),
        ("g6", 1, 409, "busy"),
    ]
    assert first.headers["Retry-After"] == "1"
    second = server.post("deals", batch, key="batch-late")  # g5 replays: g6's first is tried
    assert [r[2] for r in summary(second)] == [202, 202, 409]  # a worker may have settled
    assert summary(second)[2][3] == "busy" and second.headers["Retry-After"] == "1"
    retry = server.post("deals", batch, key="batch-late")  # the third is tried
    assert [r[2] for r in summary(retry)] == [202, 202, 409]
    assert summary(retry)[2][3] == "deal_exists"
    assert "Retry-After" not in retry.headers


def test_a_batch_takes_1_to_100_deals_and_up_to_1_mib(live_server):
    server = HttpApi(live_server.url, "games", name="bounds")
    # six full hands a deal: 100 of them are over the 64 KiB of every other endpoint
    big = deal("nope")
    big["results"] = [res(f"p{i}", "lost", LOSER_22) for i in range(6)]
    hundred = {"deals": [{**big, "deal_no": n} for n in range(1, 101)]}
    assert 64 * 1024 < len(json.dumps(hundred)) < 1024 * 1024
    response = server.post("deals", hundred)
    assert response.status_code == 200
    assert {(r["status"], r["error"]["code"]) for r in response.json()["results"]} == {
        (404, "game_not_found")
    }
    for deals, field in [([], "deals"), ([big] * 101, "deals"), (None, "deals")]:
        refused = server.post("deals", {"deals": deals})
        assert refused.status_code == 400
        assert refused.json()["error"]["code"] == "invalid"
        assert field in refused.json()["error"]["details"]
    unknown = server.post("deals", {"deals": [big], "more": 1})
    assert unknown.status_code == 400 and "more" in unknown.json()["error"]["details"]
    padded = json.dumps({"deals": [big]}) + " " * (1024 * 1024)
    too_large = server.session.post(
        f"{live_server.url}/api/v1/deals",
        data=padded,
        headers={"Content-Type": "application/json", "Idempotency-Key": "k"},
    )
    assert too_large.status_code == 413
    assert too_large.json()["error"]["code"] == "payload_too_large"
    no_key = server.session.post(f"{live_server.url}/api/v1/deals", json={"deals": [big]})
    assert no_key.status_code == 400
    assert no_key.json()["error"]["code"] == "idempotency_key_required"
    assert Deal.objects.count() == 0


def test_a_run_settles_the_free_games_of_a_batch_and_the_next_the_locked_one():
    client = make_api("games", name="settler")[1]
    template("points-1", "points", point_value=Decimal("1.00"))
    deal_ids = []
    for game_id in ("g0", "g1"):
        players = [f"{game_id}p{i}" for i in range(3)]
        for player in players:
            funded_player(player, "100.00")
        game_open(client=client, game_id=game_id, template_slug="points-1", players=players)
        body = deal(game_id)
        del body["game_id"]
        stored, _ = deal_store(client=client, game_id=game_id, payload=body)
        deal_ids.append(stored.pk)
    with game_locked("g1"):  # not waited for...
        waiting_settle()
    statuses = dict(Deal.objects.values_list("game__game_id", "status"))
    assert statuses == {"g0": "settled", "g1": "stored"}  # ...its deal waits for the next run
    waiting_settle()
    waiting_settle()  # safe to run again
    assert Deal.objects.filter(status="settled").count() == 2
    for game in Game.objects.all():
        assert game.status == Game.Status.FINISHED
        books_balance_for(game)
