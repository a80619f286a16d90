"""GET /api/v1/games: what a restarted game server reads back. Its own games only, each with its
state and whether anything of it waits for settlement (as GET /games/{id} says), filtered by
status, cursor-paged so that reading on from each `next` lists every game once; bad query
parameters are a 400 in the envelope that writes nothing."""

import pytest
from drf_spectacular.generators import SchemaGenerator

from tests.api.conftest import assert_envelope, ledger_state
from tests.architecture.test_openapi import _as_json_schema, conforms
from tests.builders import LOSER_22, WINNER, Server, funded_player, make_api, res, template
from tournaments.games.services.opening import game_open
from tournaments.models import Game

pytestmark = pytest.mark.django_db


def listed(server: Server, query: str = "") -> dict:
    response = server.get(f"games{query}")
    assert response.status_code == 200, response.content[:300]
    return response.json()


def walk(server: Server, query: str) -> tuple[list[str], int]:
    """Every game id of a list read page by page from each `next`; and how many pages."""
    seen, pages, after = [], 0, None
    while True:
        page = listed(server, query + (f"&after={after}" if after else ""))
        seen += [g["game_id"] for g in page["games"]]
        pages += 1
        after = page["next"]
        if after is None:
            return seen, pages


@pytest.fixture
def tables(db, django_capture_on_commit_callbacks, eager):
    """One game server's games: one finished (its deal settled), one open with a deal stored
    and not settled, one cancelled; and another server's game of the same id as the first."""
    template("points-2", "points")
    for p in "abcd":
        funded_player(p)
    server, other = Server(), Server(name="game-server-2")
    assert server.open("done", "points-2", ["a", "b"]).status_code == 201
    with django_capture_on_commit_callbacks(execute=True):  # settled by the eager task
        server.deal("done", 1, [res("a", "declared", WINNER), res("b", "lost", LOSER_22)])
    assert server.open("waiting", "points-2", ["c", "d"]).status_code == 201
    server.deal("waiting", 1, [res("c", "declared", WINNER), res("d", "lost", LOSER_22)])
    assert server.open("called-off", "points-2", ["a", "b"]).status_code == 201
    assert server.post("games/called-off/cancel").status_code == 200
    assert other.open("done", "points-2", ["c", "d"]).status_code == 201
    return server, other


def test_a_game_server_lists_its_own_games_oldest_first_with_their_state(tables):
    server, other = tables

    page = listed(server)

    assert page["next"] is None
    games = {g["game_id"]: g for g in page["games"]}
    assert [g["game_id"] for g in page["games"]] == ["done", "waiting", "called-off"]
    for game_id, status, settled in [
        ("done", "finished", True),
        ("waiting", "open", False),  # its deal is stored, not settled
        ("called-off", "cancelled", True),
    ]:
        item = games[game_id]
        row = Game.objects.get(client=server.client, game_id=game_id)
        assert set(item) == {
            "game_id",
            "template",
            "status",
            "settled",
            "opened_at",
            "closed_at",
        }
        assert (item["template"], item["status"], item["settled"]) == ("points-2", status, settled)
        assert item["settled"] == server.get(f"games/{game_id}").json()["settled"]
        assert item["opened_at"] == row.created_at.isoformat()
        assert item["closed_at"] == (row.finished_at and row.finished_at.isoformat())
    assert games["waiting"]["closed_at"] is None
    # the other server sees only its own game of the same id
    assert [(g["game_id"], g["status"]) for g in listed(other)["games"]] == [("done", "open")]


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("open", ["waiting"]),
        ("finished", ["done"]),
        ("cancelled", ["called-off"]),
        ("reversed", ["done"]),
    ],
)
def test_the_status_filter_lists_the_games_in_that_state(tables, status, expected):
    server, _ = tables
    if status == "reversed":  # as an approved reversal leaves it (wallets.services.reversals)
        Game.objects.filter(client=server.client, game_id="done").update(status="reversed")
    page = listed(server, f"?status={status}")
    assert [g["game_id"] for g in page["games"]] == expected
    assert page["next"] is None


def test_paging_walks_every_game_exactly_once_with_next_null_at_the_end(db):
    template("points-2", "points")
    for p in "ab":
        funded_player(p, "5000.00")
    server, other = Server(), Server(name="game-server-2")
    ids = [f"g{n:02}" for n in range(7)]
    for game_id in ids:  # another server's games in between: never listed, never a gap
        for client in (server.client, other.client):
            game_open(client=client, game_id=game_id, template_slug="points-2", players=["a", "b"])

    assert walk(server, "?limit=3") == (ids, 3)
    assert walk(server, "?limit=7") == (ids, 1)  # a full last page knows it is the last
    assert walk(server, "?limit=6") == (ids, 2)
    assert walk(server, "?limit=500") == (ids, 1)
    assert walk(server, "?status=open&limit=2") == (ids, 4)
    assert listed(server, "?limit=7&status=finished") == {"games": [], "next": None}
    # the default page holds 100
    assert len(listed(server)["games"]) == 7


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("?status=won", "status"),
        ("?status=", "status"),
        ("?status=OPEN", "status"),
        ("?limit=0", "limit"),
        ("?limit=501", "limit"),
        ("?limit=05", "limit"),
        ("?limit=abc", "limit"),
        ("?limit=", "limit"),
        ("?after=abc", "after"),
        ("?after=", "after"),
        ("?after=1%0A", "after"),
        ("?after=1234567890123456789", "after"),
        ("?statuss=open", "statuss"),
        ("?limit=1&limit=2", "limit"),
    ],
)
def test_a_bad_query_parameter_is_a_400_naming_it_and_writes_nothing(tables, query, field):
    server, _ = tables
    before = ledger_state()
    error = assert_envelope(server.get(f"games{query}"), 400, "invalid")
    assert list(error["details"]) == [field], error
    assert ledger_state() == before


def test_the_list_needs_a_key_with_the_games_scope(db):
    keyless = Server()
    keyless.api.credentials()
    assert_envelope(keyless.get("games"), 401, "not_authenticated")
    gateway = make_api("payments", name="gateway")[0]
    assert_envelope(gateway.get("/api/v1/games"), 403, "permission_denied")


def test_the_lists_answers_match_the_schema(tables):
    server, _ = tables
    openapi = _as_json_schema(SchemaGenerator().get_schema(request=None, public=True))
    for query in ("", "?limit=1", "?status=open", "?status=won"):
        conforms(openapi, "/api/v1/games", "get", server.get(f"games{query}"))
