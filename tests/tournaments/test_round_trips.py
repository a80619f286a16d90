"""The statements a game's opening and a deal's post send PostgreSQL, through the whole request
stack: an opening's own work two (one read, one write; the API layer claims the Idempotency-Key
with the answer around it); a deal four round trips (BEGIN, the read under the game's lock, the
insert, the key claimed with the answer and COMMIT in one); a batch as many, whatever its number
of deals. Outside any test transaction, as under gunicorn. The round trips are the queries libpq
sent, read from its trace: Django's query log also lists a COMMIT that psycopg had no need to
send."""

from __future__ import annotations

import contextlib
import re
import tempfile
import uuid
from decimal import Decimal

import pytest
from django.db import connection
from hypothesis import given, settings
from psycopg import pq

from rummy_ledger.api import database
from tests.builders import LOSER_22, WINNER, Server, funded_player, res, template
from tests.tournaments.games.services.tables import PLANS, pool_deal_of_kind
from tournaments.models import Deal, Game

pytestmark = pytest.mark.django_db(transaction=True)


@contextlib.contextmanager
def round_trips():
    """The queries this thread's connection sends PostgreSQL inside the block, one per round
    trip (Django's and psycopg's are all simple queries), from libpq's own trace; but the API
    key's look-up and the session's bounds (once per connection; a warm process has both)."""
    connection.ensure_connection()
    pgconn = connection.connection.pgconn
    sent: list[str] = []
    with tempfile.TemporaryFile("w+") as trace:
        pgconn.trace(trace.fileno())
        pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        try:
            yield sent
        finally:
            pgconn.untrace()
            trace.seek(0)
            messages = re.split(r"^(?=[FB]\t)", trace.read(), flags=re.MULTILINE)
            queries = [m.split("\t", 3)[3].strip() for m in messages if m.startswith("F\t")
                       and m.split("\t")[2] == "Query"]  # fmt: skip
            sent.extend(
                q for q in queries if "wallets_apiclient" not in q and "statement_timeout" not in q
            )


def _opening_work(sent: list[str]) -> list[str]:
    """An opening's own statements: its transaction's control and the API layer's
    Idempotency-Key (its answer stored at the end: `rummy_ledger.api.idempotency`) aside."""
    control = ('"BEGIN"', '"COMMIT"', '"SAVEPOINT', '"RELEASE SAVEPOINT')
    return [q for q in sent if not q.startswith(control) and "api_idempotencyrecord" not in q]


def test_an_opening_takes_two_statements_and_four_round_trips_and_a_deal_four():
    server = Server()
    template("points-1", "points", point_value=Decimal("1.00"))
    for p in ("a", "b"):
        funded_player(p, "100.00")
    with round_trips() as opening:
        opened = server.open("g1", "points-1", ["a", "b"], key="open-1")
    assert opened.status_code == 201, opened.content
    assert len(_opening_work(opening)) == 2, opening
    assert len(opening) == 4, opening
    assert opening[-1].endswith(';COMMIT"'), opening  # the key and the commit: one round trip

    deal = [res("a", "declared", WINNER), res("b", "lost", LOSER_22)]
    with round_trips() as posting:
        posted = server.deal("g1", 1, deal, key="deal-1")
    assert posted.status_code == 202, posted.content
    assert len(posting) == 4, posting
    assert Deal.objects.get().status == Deal.Status.STORED
    assert Game.objects.get().collected == Decimal("160.00")

    with round_trips() as replaying:
        again = server.deal("g1", 1, deal, key="deal-1")
    assert again.status_code == 202 and again["Idempotent-Replayed"] == "true"
    assert again.content == posted.content
    # BEGIN, the read, the claim that finds the key recorded, ROLLBACK, the record read
    assert len(replaying) == 5, replaying
    assert Deal.objects.count() == 1


def _points_games(server: Server, count: int) -> list[dict]:
    """`count` 2-player points games g0, g1, ... opened by `server`, and a deal 1 for each."""
    template("points-1", "points", point_value=Decimal("1.00"))
    for n in range(count):
        for p in (f"a{n}", f"b{n}"):
            funded_player(p, "100.00")
        server.open(f"g{n}", "points-1", [f"a{n}", f"b{n}"])
    return [
        {"game_id": f"g{n}", "deal_no": 1, "wild_joker": "KD",
         "results": [res(f"a{n}", "declared", WINNER), res(f"b{n}", "lost", LOSER_22)]}
        for n in range(count)
    ]  # fmt: skip


def test_a_batch_takes_the_same_round_trips_for_2_deals_as_for_20():
    """A batch's games are locked and read in one statement and its new deals stored in one
    more, whatever their number: as many statements as a single post."""
    server = Server()
    deals = _points_games(server, 22)
    trips = []
    for batch in (deals[:2], deals[2:]):
        with round_trips() as posting:
            posted = server.post("deals", {"deals": batch})
        assert posted.status_code == 200, posted.content
        assert {r["status"] for r in posted.json()["results"]} == {202}
        trips.append(len(posting))
    assert trips == [4, 4], trips
    assert Deal.objects.filter(status=Deal.Status.STORED).count() == 22


@settings(max_examples=25, deadline=None)
@given(plan=PLANS)
def test_a_batch_answers_every_deal_as_single_posts_in_its_order_would(plan):
    """Whatever mix a batch holds (a game's deals in or out of order, twice, with other content,
    refused), each deal's status and code are what single posts of the same deals, one after
    the other, get from a twin of the same games; and the same deals are stored."""
    prefix = uuid.uuid4().hex[:8]
    template(f"pool-{prefix}", "pool101", entry_fee=Decimal("10.00"))
    batch_server, single_server = Server(f"batch-{prefix}"), Server(f"single-{prefix}")
    for game in range(3):
        players = [f"{prefix}x{game}", f"{prefix}y{game}"]
        for player in players:
            funded_player(player, "100.00")
        for server in (batch_server, single_server):
            opened = server.open(f"{prefix}g{game}", f"pool-{prefix}", players)
            assert opened.status_code == 201, opened.content
    deals = [pool_deal_of_kind(prefix, game, deal_no, kind) for game, deal_no, kind in plan]

    posted = batch_server.post("deals", {"deals": deals})
    assert posted.status_code == 200, posted.content
    singly = []
    for deal in deals:
        body = {k: v for k, v in deal.items() if k != "game_id"}
        response = single_server.post(f"games/{deal['game_id']}/deals", body)
        code = response.json()["error"]["code"] if response.status_code != 202 else None
        singly.append((response.status_code, code))
    in_batch = [(r["status"], r.get("error", {}).get("code")) for r in posted.json()["results"]]
    assert in_batch == singly

    def stored(server: Server) -> list:
        games = Deal.objects.filter(game__client=server.client, game__game_id__startswith=prefix)
        return sorted(games.values_list("game__game_id", "deal_no", "payload_hash"))

    assert stored(batch_server) == stored(single_server)


def test_the_request_bounds_are_set_once_per_connection_also_for_keyed_writes(monkeypatch):
    """A write whose first statement is inside the API layer's transaction (`idempotent`) finds
    the bounds set before it, outside any transaction, on a warm connection: not at every
    request, where a rollback would undo them."""
    server = Server()
    template("points-1", "points", point_value=Decimal("1.00"))
    for n in range(3):
        for p in (f"a{n}", f"b{n}"):
            funded_player(p, "100.00")
    set_in = []
    set_bounds = database._set_bounds
    monkeypatch.setattr(
        database,
        "_set_bounds",
        lambda cursor: set_in.append(connection.in_atomic_block) or set_bounds(cursor),
    )
    for n in range(3):
        assert server.open(f"g{n}", "points-1", [f"a{n}", f"b{n}"]).status_code == 201
        deal = [res(f"a{n}", "declared", WINNER), res(f"b{n}", "lost", LOSER_22)]
        assert server.deal(f"g{n}", 1, deal).status_code == 202
    assert set_in in ([], [False]), set_in  # once at most, outside a transaction
    with connection.cursor() as cursor:
        cursor.execute("SHOW statement_timeout")
        assert cursor.fetchone()[0] != "0"
