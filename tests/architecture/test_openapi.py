"""The OpenAPI schema documents every response: real responses of the main endpoints validate
against the schema of their operation and status (clients generated from it can rely on it),
with jsonschema (the open enums closed: only values listed) and with openapi-core in strict mode
on the document as served."""

import copy
import json
import uuid
from datetime import timedelta
from functools import cache
from urllib.parse import urlsplit

import jsonschema
import pytest
import requests
from django.core.management import call_command
from drf_spectacular.generators import SchemaGenerator
from openapi_core import Config, OpenAPI
from openapi_core.contrib.django import DjangoOpenAPIResponse
from openapi_core.contrib.requests import RequestsOpenAPIResponse
from openapi_core.testing import MockRequest

from rummy_ledger.api.schema import known
from tests.builders import LOSER_22, WILD, WINNER, Server, funded_player, make_api, res, template

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def openapi():
    return _as_json_schema(SchemaGenerator().get_schema(request=None, public=True))


def closed(node):
    """The document with its open enums closed (`anyOf` of the known values and any other: the
    known values only; rummy_ledger/api/schema.py): clients tolerate a value not listed, the
    server's tests hold it to the values listed."""
    if isinstance(node, list):
        return [closed(n) for n in node]
    if not isinstance(node, dict):
        return node
    return _close({k: closed(v) for k, v in node.items()})


def _close(node: dict) -> dict:
    if known(node) is not None:
        node.update(node.pop("anyOf")[0])
    return node


def _as_json_schema(node):
    """OpenAPI 3.0's `nullable` into JSON Schema's type lists, everywhere; enums closed."""
    if isinstance(node, list):
        return [_as_json_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = _close({k: _as_json_schema(v) for k, v in node.items()})
    if out.pop("nullable", False):
        if "type" in out:
            out["type"] = [out["type"], "null"]
        elif "$ref" in out or "allOf" in out or "oneOf" in out:
            out = {"oneOf": [{"type": "null"}, {k: v for k, v in out.items()}]}
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
    return out


@cache
def strict_tool() -> OpenAPI:
    """openapi-core on the document as served, strict: an answer's field the schema does not
    list fails (`additionalProperties` left out reads as false), and OpenAPI 3.0.3 read to the
    letter (`nullable` only beside a `type`)."""
    document = json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True)))
    return OpenAPI.from_dict(document, config=Config(additional_properties_default_policy="forbid"))


def strictly_valid(response, method: str | None = None) -> None:
    """The answer validates with openapi-core against its operation and status, found by the
    request's path and method (or `method`: a 405 is documented on the path's operations). The
    answer is the test client's or, over real HTTP from a live server, requests'."""
    if isinstance(response, requests.Response):
        asked_method, path = response.request.method, urlsplit(response.request.url).path
        answer = RequestsOpenAPIResponse(response)
    else:  # its body was read by the view: the method and path suffice
        asked_method, path = response.wsgi_request.method, response.wsgi_request.path
        answer = DjangoOpenAPIResponse(response)
    request = MockRequest("http://testserver", method or asked_method, path)
    strict_tool().validate_response(request, answer)


def conforms(openapi, path: str, method: str, response) -> None:
    operation = openapi["paths"][path][method]
    documented = operation["responses"].get(str(response.status_code))
    assert documented, f"{method} {path} does not document {response.status_code}"
    schema = copy.deepcopy(documented["content"]["application/json"]["schema"])
    schema["components"] = openapi["components"]
    jsonschema.validate(response.json(), schema)
    strictly_valid(response, method)


def test_game_server_responses_match_the_schema(openapi, eager, django_capture_on_commit_callbacks):
    server = Server()
    template("points-2", "points")
    for p in "ab":
        funded_player(p)
    conforms(openapi, "/api/v1/templates", "get", server.get("templates"))
    conforms(openapi, "/api/v1/games", "post", server.open("g", "points-2", ["a", "b"]))
    with django_capture_on_commit_callbacks(execute=True):
        deal = server.deal("g", 1, [res("a", "declared", WINNER), res("b", "lost", LOSER_22)])
    conforms(openapi, "/api/v1/games/{game_id}/deals", "post", deal)
    game = server.get("games/g")
    assert game.json()["status"] == "finished" and game.json()["deals"][0]["transfers"]
    conforms(openapi, "/api/v1/games/{game_id}", "get", game)


def test_wallet_responses_match_the_schema(openapi):
    api = make_api("payments", "games", name="gateway")[0]
    body = {"amount": "10.00", "reference": uuid.uuid4().hex}
    conforms(
        openapi,
        "/api/v1/players/{player_id}/deposits",
        "post",
        api.post("/api/v1/players/p1/deposits", body, format="json"),
    )
    conforms(
        openapi, "/api/v1/players/{player_id}/wallet", "get", api.get("/api/v1/players/p1/wallet")
    )


def test_money_in_and_out_responses_match_the_schema(openapi):
    from tests.wallets.payments import approve, backdate, won
    from wallets.services.transfers import ledger_now
    from wallets.tax import formulas

    api = make_api("payments", name="gateway")[0]

    def post(path, body, key=None):
        return api.post(path, body, format="json", HTTP_IDEMPOTENCY_KEY=key or uuid.uuid4().hex)

    kyc = {"pan": "ABCDE1234F", "status": "verified", "reference": "kyc-1"}
    conforms(
        openapi, "/api/v1/players/{player_id}/kyc", "post", post("/api/v1/players/p1/kyc", kyc)
    )
    conforms(
        openapi, "/api/v1/players/{player_id}/kyc", "post", post("/api/v1/players/p1/kyc", kyc)
    )
    fy = formulas.financial_year_of(ledger_now())
    backdate(fy.start - timedelta(days=1), transfers=[won("p1", "500.00")])
    won("p1", "2000.00")
    path = "/api/v1/players/{player_id}/withdrawals"
    first = post("/api/v1/players/p1/withdrawals", {"amount": "1000.00", "reference": "wd-1"})
    conforms(openapi, path, "post", first)
    again = post("/api/v1/players/p1/withdrawals", {"amount": "1000.00", "reference": "wd-1"})
    conforms(openapi, path, "post", again)
    w = first.json()["withdrawal_id"]
    approve(w)
    paid = post(f"/api/v1/withdrawals/{w}/paid", {"gateway_reference": "gw-1"})
    conforms(openapi, "/api/v1/withdrawals/{withdrawal_id}/paid", "post", paid)
    second = post("/api/v1/players/p1/withdrawals", {"amount": "100.00", "reference": "wd-2"})
    failed = post(f"/api/v1/withdrawals/{second.json()['withdrawal_id']}/failed", {"reason": "x"})
    conforms(openapi, "/api/v1/withdrawals/{withdrawal_id}/failed", "post", failed)
    statement = api.get(f"/api/v1/players/p1/tax/{fy.label}")
    assert statement.json()["withdrawals"] == "1000.00"
    conforms(openapi, "/api/v1/players/{player_id}/tax/{fy}", "get", statement)
    call_command("tds_year_end", fy.previous().label)
    closed = api.get(f"/api/v1/players/p1/tax/{fy.previous().label}")
    assert closed.json()["year_end"]["carry_forward"] == "350.00"
    conforms(openapi, "/api/v1/players/{player_id}/tax/{fy}", "get", closed)


def test_a_batch_of_deals_matches_the_schema(openapi, eager, django_capture_on_commit_callbacks):
    """Each kind of result: stored, replayed, refused by the rules, another's game, malformed."""
    server = Server()
    template("points-2", "points")
    for p in "abcd":
        funded_player(p)
    server.open("g", "points-2", ["a", "b"])
    server.open("h", "points-2", ["c", "d"])

    seats = {"g": ("a", "b"), "h": ("c", "d"), "nobody": ("a", "b")}

    def deal(game_id, winner=WINNER):
        first, second = seats[game_id]
        results = [res(first, "declared", winner), res(second, "lost", LOSER_22)]
        return {"game_id": game_id, "deal_no": 1, "wild_joker": WILD, "results": results}

    batch = [deal("g"), deal("g"), deal("h", LOSER_22), deal("nobody"), {"game_id": 7}]
    with django_capture_on_commit_callbacks(execute=True):
        response = server.post("deals", {"deals": batch})
    results = response.json()["results"]
    assert [r["status"] for r in results] == [202, 202, 422, 404, 400], results
    conforms(openapi, "/api/v1/deals", "post", response)
