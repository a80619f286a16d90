"""Strict input over real HTTP: every write refuses a field it does not
know with a 400 naming it, a number a float cannot hold is refused at parse time, and the errors
say what is wrong."""

from __future__ import annotations

import uuid

import pytest
import requests
from drf_spectacular.generators import SchemaGenerator

from rummy_ledger.api.idempotency import HEADER
from tests.api.conftest import ledger_state
from tests.builders import HttpApi, funded_player, template

pytestmark = pytest.mark.django_db(transaction=True)

WRITES = ("post", "put", "patch", "delete")
PATH_VALUES = {
    "{player_id}": "p1",
    "{game_id}": "g1",
    "{withdrawal_id}": "1",
    "{fy}": "2026-27",
    "{slug}": "t1",
    "{player}": "p1",
    "{number}": "1",
    "{endpoint_id}": "1",
}


def _write_operations() -> list[tuple[str, str]]:
    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]
    operations = []
    for path, methods in paths.items():
        for name, value in PATH_VALUES.items():
            path = path.replace(name, value)
        assert "{" not in path, f"a path parameter this test does not fill: {path}"
        operations += [(method.upper(), path) for method in methods if method in WRITES]
    return sorted(operations)


@pytest.fixture
def http(live_server):
    api = HttpApi(live_server.url, "games", "payments", name="strict")

    def send(method: str, path: str, body: str | None) -> requests.Response:
        headers = {HEADER: uuid.uuid4().hex, "Content-Type": "application/json"}
        return api.session.request(method, live_server.url + path, data=body, headers=headers)

    return send


def _game_opened(http) -> None:
    template("points-2", "points")
    for player in ("a", "b"):
        funded_player(player)
    opened = '{"game_id": "g1", "template": "points-2", "players": ["a", "b"]}'
    assert http("POST", "/api/v1/games", opened).status_code == 201


def _error(response: requests.Response, status: int, code: str) -> dict:
    assert response.status_code == status, (response.status_code, response.text[:300])
    assert response.headers["Content-Type"].startswith("application/json")
    error = response.json()["error"]
    assert error["code"] == code, error
    return error


@pytest.mark.parametrize(("method", "path"), _write_operations())
def test_every_write_refuses_an_unknown_field_naming_it(http, method, path):
    before = ledger_state()

    response = http(method, path, '{"regoin": "TN"}')

    error = _error(response, 400, "invalid")
    assert error["details"]["regoin"] == ["Unknown field: this operation does not take it."]
    assert ledger_state() == before


def test_a_misspelt_field_beside_valid_ones_is_refused_and_nothing_is_credited(http):
    body = '{"amount": "100.00", "reference": "gw-1", "regoin": "TN"}'

    error = _error(http("POST", "/api/v1/players/p1/deposits", body), 400, "invalid")

    assert list(error["details"]) == ["regoin"]
    assert ledger_state()[:2] == (0, {"n": 0, "total": None})


def test_an_unknown_field_inside_a_deal_result_is_refused_naming_it(http):
    _game_opened(http)
    deal = (
        '{"deal_no": 1, "wild_joker": "5D", "results": [{"player": "a", "outcome": "first_drop",'
        ' "pionts": 3}, {"player": "b", "outcome": "declared"}]}'
    )

    error = _error(http("POST", "/api/v1/games/g1/deals", deal), 400, "invalid")

    assert error["details"]["results"]["0"]["pionts"] == [
        "Unknown field: this operation does not take it."
    ]


@pytest.mark.parametrize("number", ["1e999", "-1e999", "1E400", "NaN", "Infinity", "-Infinity"])
def test_a_number_a_float_cannot_hold_is_refused_when_parsed(http, number):
    body = f'{{"deal_no": {number}, "results": []}}'

    error = _error(http("POST", "/api/v1/games/g1/deals", body), 400, "parse_error")

    assert number.lstrip("-") in error["message"] or "not a JSON number" in error["message"]


@pytest.mark.parametrize("digits", [101, 5000])
def test_an_integer_of_too_many_digits_is_refused_in_the_services_own_words(http, digits):
    body = f'{{"deal_no": {"9" * digits}, "results": []}}'

    error = _error(http("POST", "/api/v1/games/g1/deals", body), 400, "parse_error")

    assert error["message"].endswith("has more than 100 digits")
    assert "sys." not in error["message"] and "4300" not in error["message"]


def test_an_integer_of_a_hundred_digits_reaches_the_field_which_refuses_it(http):
    body = f'{{"deal_no": {"9" * 100}, "wild_joker": "KD", "results": []}}'

    error = _error(http("POST", "/api/v1/games/g1/deals", body), 400, "invalid")

    assert "deal_no" in error["details"]


def test_reopening_a_cancelled_game_says_it_was_cancelled(http):
    _game_opened(http)
    assert http("POST", "/api/v1/games/g1/cancel", None).status_code == 200
    opened = '{"game_id": "g1", "template": "points-2", "players": ["a", "b"]}'

    error = _error(http("POST", "/api/v1/games", opened), 409, "game_exists")

    assert "already open" not in error["message"] and "cancelled" in error["message"]
    assert error["details"] == {"game_id": "g1", "status": "cancelled"}


def test_an_invalid_card_in_an_evaluated_hand_is_a_list_of_errors(http):
    body = '{"wild_joker": "5D", "groups": [["AS", "2S", "XX"]]}'

    error = _error(http("POST", "/api/v1/hands/evaluate", body), 400, "invalid")

    assert isinstance(error["details"]["groups"], list) and "XX" in error["details"]["groups"][0]
