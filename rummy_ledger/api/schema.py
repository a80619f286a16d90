"""OpenAPI: every operation documents every status it can answer, and the error codes of each.

A drf-spectacular postprocessing hook (`SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"]`): the
envelope is the `Error` component; each operation gets the statuses any request can be answered
with (`ANY`), those of a request with a body (`WITH_BODY`) and with an `Idempotency-Key`
(`WITH_KEY`), and the codes its view declares with `error_codes(...)` (the domain's refusals:
`extend_schema(extensions=error_codes({409: [...]}))`). Each status lists exactly its codes (an
enum per operation and status, not the whole catalogue), and 409, 429 and 503 their `Retry-After`.
The fuzz test in tests/api holds real responses to it.

Then the document is made one that strict tools read as the server answers (`contract`):
- a nullable reference (drf-spectacular's `allOf: [X], nullable: true`, which OpenAPI 3.0.3 does
  not read as nullable: `nullable` acts only beside a `type`) becomes `oneOf: [X, NullEnum]`,
  the form drf-spectacular gives a nullable choice, which every 3.0 validator reads;
- an enum in an answer is open (the server may add a value: a status, an error code):
  `anyOf: [{type, enum: [the known values]}, {type}]`, said in its description, so any value of
  its type validates, and a client generated from the document types the known values and takes
  another as it is (openapi-python-client: `CodeEnum | str`) instead of failing on it; an enum in
  a request stays closed (the server refuses any other value). The server's own tests close them
  again (`known`: tests/architecture/test_openapi.py), so an answer carries only a value listed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from enum import StrEnum

from rummy_ledger.api.codes import ApiErrorCode
from rummy_ledger.errors import CommonErrorCode

COMPONENT = "Error"
EXTENSION = "x-error-codes"  # what a view declares; folded into its responses, then removed
ENVELOPE = {
    "type": "object",
    "description": "Every error under /api/ has this shape.",
    "properties": {
        "error": {
            "type": "object",
            "description": "What went wrong.",
            "properties": {
                "code": {
                    "type": "string",
                    "description": "Switch on this: each operation and status lists its codes.",
                },
                "message": {"type": "string", "description": "For people, not for parsing."},
                "details": {
                    "type": "object",
                    "additionalProperties": {},
                    "description": "What the code is about: the fields refused, the players "
                    "short, the limit reached...",
                },
            },
            "required": ["code", "message", "details"],
        }
    },
    "required": ["error"],
}

DESCRIPTIONS = {
    "400": "Malformed: the request or a field is invalid (`details` names the fields).",
    "401": "No API key, or an unknown or revoked one (`Authorization: Api-Key <key>`); "
    "`invalid_key`: a key past its end (expired, or rotated out).",
    "403": "The API key lacks the scope this operation needs; `network_refused`: the key was "
    "used from outside its client's networks.",
    "404": "No such resource (or not this client's), or an id outside the id alphabet.",
    "405": "This path does not take this method.",
    "406": "The client does not accept JSON.",
    "409": "Conflict: the state does not allow it, or contention; with `Retry-After` when "
    "retrying the same request (the same `Idempotency-Key`) helps.",
    "410": "Gone: the cursor is older than the events kept (`EVENTS_RETENTION_DAYS`): read "
    "the feed again from its start.",
    "413": "The request body is over the size limit (`API_MAX_BODY_BYTES`).",
    "415": "The body is not JSON (the API takes `application/json` only).",
    "422": "Well-formed, but the rules refuse it (`details` gives the reasons).",
    "429": "Over this client's rate limit (`details`: its `limit` a second and `burst`): "
    "nothing was done; retry after `Retry-After`.",
    "503": "The database does not answer: nothing was written; retry after `Retry-After`.",
}
RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before retrying (409: only when retrying helps; 429: "
        "until the client's bucket holds a token again).",
        "schema": {"type": "integer", "minimum": 1},
    }
}

Codes = Mapping[int | str, Iterable[StrEnum]]
# What any request can be answered: authentication, scope, an unknown id, the method, the
# Accept header, the database's bounded waits (409 busy), the client's rate limit (429) and the
# database's absence (503).
ANY: Codes = {
    400: [CommonErrorCode.INVALID, ApiErrorCode.BAD_REQUEST],
    401: [
        ApiErrorCode.NOT_AUTHENTICATED,
        ApiErrorCode.AUTHENTICATION_FAILED,
        ApiErrorCode.INVALID_KEY,
    ],
    403: [ApiErrorCode.PERMISSION_DENIED, ApiErrorCode.NETWORK_REFUSED],
    404: [CommonErrorCode.NOT_FOUND],
    405: [ApiErrorCode.METHOD_NOT_ALLOWED],
    406: [ApiErrorCode.NOT_ACCEPTABLE],
    409: [CommonErrorCode.BUSY],
    429: [ApiErrorCode.RATE_LIMITED],
    503: [ApiErrorCode.SERVICE_UNAVAILABLE],
}
# ... and a request with a body: its parse, its size, its media type.
WITH_BODY: Codes = {
    400: [ApiErrorCode.PARSE_ERROR],
    413: [ApiErrorCode.PAYLOAD_TOO_LARGE],
    415: [ApiErrorCode.UNSUPPORTED_MEDIA_TYPE],
}
# ... and an operation that takes an Idempotency-Key: a bad key, a reused one, one in flight.
WITH_KEY: Codes = {
    400: [ApiErrorCode.IDEMPOTENCY_KEY_REQUIRED],
    409: [ApiErrorCode.IDEMPOTENCY_CONFLICT, ApiErrorCode.REQUEST_IN_FLIGHT],
}


def error_codes(codes: Codes) -> dict:
    """The `extensions` of an operation's `extend_schema`: the codes of the refusals its services
    can answer, by status, beyond those every operation has."""
    return {EXTENSION: {str(status): [str(c) for c in cs] for status, cs in codes.items()}}


def _merge(*tables: Mapping) -> dict[str, list[str]]:
    merged: dict[str, list[str]] = {}
    for table in tables:
        for status, codes in table.items():
            known = merged.setdefault(str(status), [])
            known += [str(c) for c in codes if str(c) not in known]
    return dict(sorted(merged.items()))


def _response(status: str, codes: list[str]) -> dict:
    schema = {
        "allOf": [
            {"$ref": f"#/components/schemas/{COMPONENT}"},
            {  # narrows `Error`, adds no field: says so for tools that read a left-out
                # `additionalProperties` as false (openapi-core's strict policy)
                "properties": {
                    "error": {
                        "properties": {"code": {"type": "string", "enum": codes}},
                        "additionalProperties": True,
                    }
                },
                "additionalProperties": True,
            },
        ]
    }
    response = {
        "description": f"{DESCRIPTIONS[status]} Codes: {', '.join(f'`{c}`' for c in codes)}.",
        "content": {"application/json": {"schema": schema}},
    }
    if status in ("409", "429", "503"):
        response["headers"] = RETRY_AFTER
    return response


def _closed(schema: dict, components: dict, seen: set[str]) -> None:
    """A request body and every object in it take no other fields: the API refuses unknown ones
    (400 naming them), so the schema says `additionalProperties: false`."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        if name not in seen:
            seen.add(name)
            _closed(components[name], components, seen)
        return
    if schema.get("type") == "object" and "properties" in schema:
        schema["additionalProperties"] = False
    for key in ("properties",):
        for sub in schema.get(key, {}).values():
            _closed(sub, components, seen)
    for key in ("items", "not"):
        if isinstance(schema.get(key), dict):
            _closed(schema[key], components, seen)
    for key in ("allOf", "oneOf", "anyOf"):
        for sub in schema.get(key, []):
            _closed(sub, components, seen)


def document_errors(result: dict, generator, request, public) -> dict:
    components = result.setdefault("components", {}).setdefault("schemas", {})
    components[COMPONENT] = ENVELOPE
    for methods in result.get("paths", {}).values():
        for method, operation in methods.items():
            headers = {p["name"] for p in operation.get("parameters", []) if p["in"] == "header"}
            codes = _merge(
                ANY,
                WITH_BODY if "requestBody" in operation or method in ("post", "put") else {},
                WITH_KEY if "Idempotency-Key" in headers else {},
                operation.pop(EXTENSION, {}),
            )
            for parameter in operation.get("parameters", []):  # an id says what it is
                if "description" in parameter.get("schema", {}):
                    parameter.setdefault("description", parameter["schema"]["description"])
            if "requestBody" in operation:  # no operation may leave its body out (an exclusion's
                operation["requestBody"]["required"] = True  # fields are each optional)
                for content in operation["requestBody"]["content"].values():
                    _closed(content["schema"], components, set())
            responses = operation.setdefault("responses", {})
            for status, status_codes in codes.items():
                responses[status] = _response(status, status_codes)
            operation["responses"] = dict(sorted(responses.items()))
    return result


NULL = "NullEnum"  # drf-spectacular's component for null: `{"enum": [null]}`
OPEN_NOTE = "Open: the server may add values; a client tolerates one it does not know."


def mappings(node, skip: tuple[str, ...] = ()) -> Iterator[dict]:
    """Every mapping of a JSON tree, each after those inside it (so a caller may rewrite the one
    it is given); the values under a key in `skip` are left out."""
    if isinstance(node, list):
        for item in node:
            yield from mappings(item, skip)
    elif isinstance(node, dict):
        for key, value in node.items():
            if key not in skip:
                yield from mappings(value, skip)
        yield node


def _nullable(root) -> None:
    """Every `nullable` without a `type` beside it (a no-op in OpenAPI 3.0.3) becomes a `oneOf`
    with `NullEnum`."""
    null = {"$ref": f"#/components/schemas/{NULL}"}
    for node in mappings(root):
        if not node.get("nullable") or "type" in node:
            continue
        del node["nullable"]
        if "$ref" in node:
            node["oneOf"] = [{"$ref": node.pop("$ref")}]
        elif "allOf" in node and len(node["allOf"]) == 1:
            node["oneOf"] = node.pop("allOf")
        choices = node.setdefault("oneOf", [])
        if null not in choices:
            choices.append(null)


def _refs(node, found: set[str], components: dict) -> set[str]:
    """The components a schema names, through every reference."""
    if isinstance(node, list):
        for item in node:
            _refs(item, found, components)
    elif isinstance(node, dict):
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            if name not in found:
                found.add(name)
                _refs(components[name], found, components)
        for value in node.values():
            _refs(value, found, components)
    return found


def _open(root) -> None:
    """An enum of strings or integers becomes open: any value of its type, the known ones
    first. (`not: {enum: [...]}` is a rule, not a list of values.)"""
    for node in mappings(root, skip=("not",)):
        if "enum" in node and node.get("type") in ("string", "integer"):
            kind, values = node.pop("type"), node.pop("enum")
            node["anyOf"] = [{"type": kind, "enum": values}, {"type": kind}]
            listed = ", ".join(f"`{v}`" for v in values)
            text = node.get("description", "")
            node["description"] = f"{text}\n\n{OPEN_NOTE} Known: {listed}.".lstrip()


def known(node) -> list | None:
    """The values an open enum lists (`_open`), or None for any other schema."""
    if not isinstance(node, dict) or len(node.get("anyOf", [])) != 2:
        return None
    listed, other = node["anyOf"]
    return listed["enum"] if "enum" in listed and other == {"type": listed["type"]} else None


def open_answers(result: dict) -> None:
    """Every enum an answer holds and no request names is open (`_open`)."""
    components = result["components"]["schemas"]
    _, asked = requests(result)
    for methods in result["paths"].values():
        for operation in methods.values():
            for response in operation["responses"].values():
                _open([c["schema"] for c in response.get("content", {}).values()])
    answered = set()
    for methods in result["paths"].values():
        for operation in methods.values():
            _refs(operation["responses"], answered, components)
    for name in sorted(answered - asked):
        _open(components[name])


# What every string refuses and a schema must say: PostgreSQL text holds no NUL character, so
# DRF refuses one in any field ("Null characters are not allowed.").
NO_NUL = "^[^\\u0000]*$"


def requests(result: dict) -> tuple[list, set[str]]:
    """What requests send: each operation's parameters and body, and every component they
    name."""
    components = result["components"]["schemas"]
    parts = [
        [operation.get("parameters", []), operation.get("requestBody", {})]
        for methods in result["paths"].values()
        for operation in methods.values()
    ]
    return parts, _refs(parts, set(), components)


def _no_nul(result: dict) -> None:
    """Every string a request sends, without a pattern or a list of values of its own, says it
    holds no NUL."""
    parts, asked = requests(result)
    components = result["components"]["schemas"]
    for node in mappings([parts, [components[name] for name in sorted(asked)]]):
        if node.get("type") == "string" and not {"pattern", "enum"} & node.keys():
            node["pattern"] = NO_NUL


def contract(result: dict, generator, request, public) -> dict:
    """A postprocessing hook after `document_errors`: strings without NUL, nullable references
    and open enums."""
    components = result.setdefault("components", {}).setdefault("schemas", {})
    _no_nul(result)
    _nullable(result)
    components.setdefault(NULL, {"enum": [None]})
    open_answers(result)
    return result
