"""The schema documents what the API really does (issue 11, finding 6): every operation its error
responses in the envelope, the `Idempotency-Key` its limits, fields that refuse "" minLength 1,
ids their alphabet; and real error responses validate against it."""

import pytest
from drf_spectacular.generators import SchemaGenerator

from rummy_ledger.api.codes import all_codes
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
        statuses = {"400", "401", "403", "404", "406"}
        if method == "post":
            statuses |= {"409", "413", "415", "422"}
        for status in statuses:
            documented = operation["responses"].get(status)
            assert documented, f"{method} {path} does not document {status}"
            assert documented["content"]["application/json"]["schema"] == ERROR_REF
            found += 1
    assert found >= 10 * 5


def test_the_error_codes_are_the_catalogue(schema):
    code = schema["components"]["schemas"]["Error"]["properties"]["error"]["properties"]["code"]
    assert code["enum"] == all_codes()


def test_the_idempotency_key_has_its_limits(schema):
    headers = [
        parameter
        for _, _, operation in operations(schema)
        for parameter in operation.get("parameters", [])
        if parameter["name"] == "Idempotency-Key"
    ]
    assert len(headers) >= 6
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
        assert id_schema["pattern"] == "^[A-Za-z0-9._-]{1,64}$" and id_schema["maxLength"] == 64


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
