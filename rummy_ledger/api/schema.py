"""OpenAPI: every operation documents every status it can answer, and the error codes of each.

A drf-spectacular postprocessing hook (`SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"]`): the
envelope is the `Error` component; each operation gets the statuses any request can be answered
with (`ANY`), those of a request with a body (`WITH_BODY`) and with an `Idempotency-Key`
(`WITH_KEY`), and the codes its view declares with `error_codes(...)` (the domain's refusals:
`extend_schema(extensions=error_codes({409: [...]}))`). Each status lists exactly its codes (an
enum per operation and status, not the whole catalogue), and 409 and 503 their `Retry-After`.
The fuzz test in tests/api holds real responses to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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
    "401": "No API key, or an unknown or revoked one (`Authorization: Api-Key <key>`).",
    "403": "The API key lacks the scope this operation needs.",
    "404": "No such resource (or not this client's), or an id outside the id alphabet.",
    "405": "This path does not take this method.",
    "406": "The client does not accept JSON.",
    "409": "Conflict: the state does not allow it, or contention; with `Retry-After` when "
    "retrying the same request (the same `Idempotency-Key`) helps.",
    "413": "The request body is over the size limit (`API_MAX_BODY_BYTES`).",
    "415": "The body is not JSON (the API takes `application/json` only).",
    "422": "Well-formed, but the rules refuse it (`details` gives the reasons).",
    "503": "The database does not answer: nothing was written; retry after `Retry-After`.",
}
RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before retrying (409: only when retrying helps).",
        "schema": {"type": "integer", "minimum": 1},
    }
}

Codes = Mapping[int | str, Iterable[StrEnum]]
# What any request can be answered: authentication, scope, an unknown id, the method, the
# Accept header, the database's bounded waits (409 busy) and its absence (503).
ANY: Codes = {
    400: [CommonErrorCode.INVALID, ApiErrorCode.BAD_REQUEST],
    401: [ApiErrorCode.NOT_AUTHENTICATED, ApiErrorCode.AUTHENTICATION_FAILED],
    403: [ApiErrorCode.PERMISSION_DENIED],
    404: [CommonErrorCode.NOT_FOUND],
    405: [ApiErrorCode.METHOD_NOT_ALLOWED],
    406: [ApiErrorCode.NOT_ACCEPTABLE],
    409: [CommonErrorCode.BUSY],
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
            {"properties": {"error": {"properties": {"code": {"enum": codes}}}}},
        ]
    }
    response = {
        "description": f"{DESCRIPTIONS[status]} Codes: {', '.join(f'`{c}`' for c in codes)}.",
        "content": {"application/json": {"schema": schema}},
    }
    if status in ("409", "503"):
        response["headers"] = RETRY_AFTER
    return response


def document_errors(result: dict, generator, request, public) -> dict:
    result.setdefault("components", {}).setdefault("schemas", {})[COMPONENT] = ENVELOPE
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
            responses = operation.setdefault("responses", {})
            for status, status_codes in codes.items():
                responses[status] = _response(status, status_codes)
            operation["responses"] = dict(sorted(responses.items()))
    return result
