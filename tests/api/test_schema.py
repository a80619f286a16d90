"""The schema documents what the API really does: every operation its error
responses in the envelope, the `Idempotency-Key` its limits, fields that refuse "" minLength 1,
ids their alphabet; and real error responses validate against it."""

import json
import re

import jsonschema
import pytest
from drf_spectacular.generators import SchemaGenerator
from openapi_spec_validator import validate

from rummy_ledger import ids
from rummy_ledger.api.codes import all_codes
from rummy_ledger.api.schema import NO_NUL, known, mappings, requests
from tests.api.conftest import assert_envelope
from tests.architecture.test_openapi import _as_json_schema, conforms

pytestmark = pytest.mark.django_db

ERROR_REF = {"$ref": "#/components/schemas/Error"}


@pytest.fixture(scope="module")
def schema():
    return SchemaGenerator().get_schema(request=None, public=True)


def operations(schema):
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            yield path, method, operation


def test_every_operation_documents_its_errors_in_the_envelope(schema):
    assert schema["components"]["schemas"]["Error"]["properties"]["error"]["required"] == [
        "code",
        "message",
        "details",
    ]
    found = 0
    for path, method, operation in operations(schema):
        statuses = {"400", "401", "403", "404", "405", "406", "409", "429", "503"}
        if method in ("post", "put"):
            statuses |= {"413", "415"}
        for status in statuses:
            documented = operation["responses"].get(status)
            assert documented, f"{method} {path} does not document {status}"
            schema_ = documented["content"]["application/json"]["schema"]
            assert schema_["allOf"][0] == ERROR_REF
            found += 1
        for status in ("409", "429", "503"):  # retry after this long
            header = operation["responses"][status]["headers"]["Retry-After"]
            assert header["schema"]["type"] == "integer"
    assert found >= 18 * 9


def error_codes(operation, status: str) -> list[str]:
    documented = operation["responses"][status]["content"]["application/json"]["schema"]
    return known(documented["allOf"][1]["properties"]["error"]["properties"]["code"])


def test_each_operation_lists_its_own_error_codes_by_status(schema):
    paths = schema["paths"]
    catalogue = set(all_codes())
    for path, method, operation in operations(schema):
        for status in operation["responses"]:
            if status >= "400":
                codes = error_codes(operation, status)
                assert codes and set(codes) <= catalogue, (method, path, status)
                assert len(codes) < len(catalogue) / 3, (method, path, status)
    # reads answer busy too; a refusal is listed where its service raises it, not everywhere
    assert "busy" in error_codes(paths["/api/v1/players/{player_id}/wallet"]["get"], "409")
    deposit = paths["/api/v1/players/{player_id}/deposits"]["post"]
    assert "deposit_limit" in error_codes(deposit, "409")
    assert "deal_exists" not in error_codes(deposit, "409")
    deal = paths["/api/v1/games/{game_id}/deals"]["post"]
    assert {"deal_exists", "idempotency_conflict"} <= set(error_codes(deal, "409"))
    assert "invalid_declaration" in error_codes(deal, "422")
    assert "financial_year_invalid" in error_codes(
        paths["/api/v1/players/{player_id}/tax/{fy}"]["get"], "400"
    )


def test_the_schema_is_valid_openapi_3(schema):
    validate(json.loads(json.dumps(schema)))  # openapi-spec-validator: raises on any fault


def test_security_is_listed_once_and_says_how_to_send_the_key(schema):
    for path, method, operation in operations(schema):
        assert operation["security"] == [{"ApiKey": []}], (method, path)
    scheme = schema["components"]["securitySchemes"]["ApiKey"]
    assert scheme["name"] == "Authorization" and "`Api-Key <key>`" in scheme["description"]


def test_every_field_has_a_description(schema):
    undescribed = [
        f"{name}.{field}"
        for name, component in schema["components"]["schemas"].items()
        for field, property_ in component.get("properties", {}).items()
        if not property_.get("description")
    ]
    assert undescribed == []
    for path, method, operation in operations(schema):
        for parameter in operation.get("parameters", []):
            assert parameter.get("description"), (method, path, parameter["name"])


def test_a_deals_results_are_typed(schema):
    results = schema["components"]["schemas"]["DealOut"]["properties"]["results"]
    assert results["items"] == {"$ref": "#/components/schemas/DealResultOut"}
    result = schema["components"]["schemas"]["DealResultOut"]["properties"]
    assert {"player", "outcome", "groups", "claimed_points", "melded", "in_hand"} <= set(result)


def test_the_idempotency_key_rule_is_stated_per_operation(schema):
    games, payments = [], []
    for path, method, operation in operations(schema):
        header = [p for p in operation.get("parameters", []) if p["name"] == "Idempotency-Key"]
        # reads, a write of nothing, and a delete (a second one is 404)
        if (
            method == "get"
            or path == "/api/v1/hands/evaluate"
            or (method == "delete" and path.startswith("/api/v1/webhook-endpoints/"))
        ):
            assert header == [], (method, path)
        elif path.startswith(("/api/v1/games", "/api/v1/tournaments", "/api/v1/deals")):
            games.append(header[0]["required"])
            assert header[0]["description"].startswith("Required:")
        else:
            payments.append(header[0].get("required", False))
            assert header[0]["description"].startswith("Optional:")
    # 6 of the games' are tournaments, 1 the batch of deals
    assert games == [True] * 12 and payments == [False] * 8  # 8: the webhook endpoints' POST


def pattern(schema, component: str, field: str) -> str:
    return schema["components"]["schemas"][component]["properties"][field]["pattern"]


@pytest.mark.parametrize(
    ("component", "field", "taken", "refused"),
    [
        ("KycIn", "pan", ["ABCDE1234F", "abcde1234f"],
         ["ABCDE1234", " ABCDE1234F", "ABCDE1234F\n"]),
        ("DepositIn", "amount", ["1.00", "500", "10000000.00"], ["0.99", "0.00", "10000000.01"]),
        ("WithdrawalIn", "amount", ["1.5", "000000000001"], ["-1", "1e3", "1.234"]),
        ("LimitsIn", "daily", ["1", "99999999.99"], ["0", "0.0", ""]),
        ("GameOpenIn", "game_id", ["a.b", ".", "x_-9"], ["a..b", "..", "a\n"]),
    ],
)  # fmt: skip
def test_patterns_say_what_the_server_takes(schema, component, field, taken, refused):
    regex = pattern(schema, component, field)
    assert all(re.search(regex, text) for text in taken), regex
    assert not any(re.search(regex, text) for text in refused), regex


def test_every_string_a_request_sends_says_it_holds_no_nul_as_the_server_refuses_one(schema, api):
    parts, asked = requests(schema)
    sent = [parts, [schema["components"]["schemas"][name] for name in asked]]
    strings = [node for node in mappings(sent) if node.get("type") == "string"]
    bare = [node for node in strings if not {"pattern", "enum"} & node.keys()]
    assert strings and bare == []
    assert re.search(NO_NUL, "a player") and not re.search(NO_NUL, "a\x00b")
    body = {"game_id": "g\x00", "template": "points-2", "players": ["a", "b"]}

    refused = api.post("/api/v1/games", body, format="json", HTTP_IDEMPOTENCY_KEY="k")

    assert_envelope(refused, 400, "invalid")


RULES_REFUSED = [[None, None], {"cap": "x"}, {"nope": 1}, "S9", {"preset": "S9"}, 7, {"cap": None}]


@pytest.mark.parametrize("rules", [*RULES_REFUSED, "S1", {"preset": "S1", "cap": 60}])
def test_a_rules_spec_is_declared_as_the_server_takes_it(schema, api, rules):
    declared = _as_json_schema(schema["components"]["schemas"]["HandIn"]["properties"]["rules"])
    body = {"wild_joker": "KD", "groups": [["AS", "2S", "3S"]], "rules": rules}

    response = api.post("/api/v1/hands/evaluate", body, format="json")

    takes = jsonschema.Draft7Validator(declared).is_valid(rules)
    assert takes == (rules not in RULES_REFUSED)
    assert (response.status_code != 400) == takes, response.content


def test_days_or_permanent_and_the_financial_year_are_declared(schema):
    exclusion = schema["components"]["schemas"]["SelfExclusionIn"]
    assert len(exclusion["oneOf"]) == 2
    statement = schema["paths"]["/api/v1/players/{player_id}/tax/{fy}"]["get"]
    fy = next(p for p in statement["parameters"] if p["name"] == "fy")["schema"]["pattern"]
    assert re.search(fy, "2026-27") and re.search(fy, "2000-01") and re.search(fy, "2098-99")
    for wrong in ("2099-00", "1999-00", "9999-00", "2026-28", "२०२६-27", "2026-27\n"):
        assert not re.search(fy, wrong), wrong


def test_the_idempotency_key_has_its_limits(schema):
    headers = [
        parameter
        for _, _, operation in operations(schema)
        for parameter in operation.get("parameters", [])
        if parameter["name"] == "Idempotency-Key"
    ]
    assert len(headers) >= 12
    for header in headers:
        assert header["schema"]["minLength"] == 1 and header["schema"]["maxLength"] == 128


@pytest.mark.parametrize(
    ("component", "field"),
    [
        ("DepositIn", "reference"),
        ("GameOpenIn", "game_id"),
        ("GameOpenIn", "template"),
        ("RejoinIn", "player"),
        ("ResultIn", "player"),
        ("HandIn", "wild_joker"),
    ],
)
def test_fields_that_refuse_an_empty_string_say_so(schema, component, field):
    assert schema["components"]["schemas"][component]["properties"][field]["minLength"] == 1


def test_ids_show_their_alphabet_in_paths_and_bodies(schema):
    path_ids = [
        p["schema"]
        for _, _, operation in operations(schema)
        for p in operation.get("parameters", [])
        if p["in"] == "path" and p["name"] in ("player_id", "game_id")
    ]
    assert len(path_ids) >= 7
    body_id = schema["components"]["schemas"]["GameOpenIn"]["properties"]["players"]["items"]
    for id_schema in [*path_ids, body_id]:
        assert id_schema["pattern"] == ids.JSON_SCHEMA["pattern"] and id_schema["maxLength"] == 64


@pytest.mark.parametrize("key", ["k" * 129, "has space", "tab\tkey", "ключ"])
def test_an_idempotency_key_outside_its_limits_is_refused(api, key):
    response = api.post("/api/v1/games", {"game_id": "g"}, format="json", HTTP_IDEMPOTENCY_KEY=key)
    assert_envelope(response, 400, "idempotency_key_required")


@pytest.fixture(scope="module")
def openapi(schema):
    return _as_json_schema(schema)


@pytest.mark.parametrize(
    ("method", "path", "template", "body", "status"),
    [
        ("get", "/api/v1/games/nope", "/api/v1/games/{game_id}", None, 404),
        ("post", "/api/v1/games", "/api/v1/games", {"game_id": ""}, 400),
        ("post", "/api/v1/hands/evaluate", "/api/v1/hands/evaluate", "x=1", 415),
        ("post", "/api/v1/games/g/deals", "/api/v1/games/{game_id}/deals", "{", 400),
    ],
)
def test_error_responses_validate_against_the_schema(
    api, openapi, method, path, template, body, status
):
    if body is None:
        response = api.get(path)
    elif isinstance(body, dict):
        response = api.post(path, body, format="json", HTTP_IDEMPOTENCY_KEY="k")
    else:
        kind = "application/json" if status == 400 else "application/x-www-form-urlencoded"
        response = api.generic("POST", path, body, content_type=kind, HTTP_IDEMPOTENCY_KEY="k")
    assert response.status_code == status
    conforms(openapi, template, method, response)


@pytest.mark.parametrize(
    ("request_", "template", "method", "status", "code"),
    [
        (lambda api: api.delete("/api/v1/templates"), "/api/v1/templates", "get", 405,
         "method_not_allowed"),
        (lambda api: api.get("/api/v1/templates", HTTP_ACCEPT="text/html"), "/api/v1/templates",
         "get", 406, "not_acceptable"),
        (lambda api: api.generic("POST", "/api/v1/players/p/deposits", "[" + " " * 70_000 + "]",
                                 content_type="application/json"),
         "/api/v1/players/{player_id}/deposits", "post", 413, "payload_too_large"),
        (lambda api: api.get("/api/v1/players/nobody/wallet"),
         "/api/v1/players/{player_id}/wallet", "get", 404, "unknown_player"),
        (lambda api: api.get("/api/v1/players/p/tax/2026-28"),
         "/api/v1/players/{player_id}/tax/{fy}", "get", 400, "financial_year_invalid"),
        (lambda api: api.post("/api/v1/games", {}, format="json"), "/api/v1/games", "post", 400,
         "idempotency_key_required"),
        (lambda api: api.post("/api/v1/withdrawals/999/paid", {"gateway_reference": "g"},
                              format="json"),
         "/api/v1/withdrawals/{withdrawal_id}/paid", "post", 404, "unknown_withdrawal"),
    ],
)  # fmt: skip
def test_what_the_api_answers_is_documented_status_and_code(
    api, openapi, request_, template, method, status, code
):
    """The schema fails here on a status or code it does not document (405 and the per-operation
    codes were missing)."""
    from tests.builders import funded_player

    funded_player("p")  # for the tax statement
    response = request_(api)
    assert_envelope(response, status, code)
    conforms(openapi, template, method, response)


def test_a_withdrawal_needs_no_idempotency_key_its_reference_is_its_key(api):
    from tests.wallets.payments import won

    api.post("/api/v1/players/w/kyc", {"pan": "ABCDE1234F", "status": "verified",
             "reference": "k"}, format="json")  # fmt: skip
    won("w", "100.00")
    body = {"amount": "10.00", "reference": "wd-1"}
    first = api.post("/api/v1/players/w/withdrawals", body, format="json")
    again = api.post("/api/v1/players/w/withdrawals", body, format="json")
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["withdrawal_id"] == again.json()["withdrawal_id"]
