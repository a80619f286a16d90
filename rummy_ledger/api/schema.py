"""OpenAPI: every operation documents its error responses, all in the one envelope.

A drf-spectacular postprocessing hook (`SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"]`): the
envelope becomes the `Error` component, its `code` an enum of the whole catalogue, and each
operation gets the error statuses it can answer (a client generated from the schema can parse
every error; the fuzz test in tests/api holds real responses to it).
"""

from __future__ import annotations

from rummy_ledger.api.codes import all_codes

COMPONENT = "Error"
ENVELOPE = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "code": {"type": "string", "enum": all_codes(), "description": "Switch on this."},
                "message": {"type": "string", "description": "For people, not for parsing."},
                "details": {"type": "object", "additionalProperties": {}},
            },
            "required": ["code", "message", "details"],
        }
    },
    "required": ["error"],
}

# What any operation may answer.
ANY = {
    "400": "Malformed: the request or a field is invalid (`details` names the fields).",
    "401": "No API key, or an unknown or revoked one.",
    "403": "The API key lacks the scope this operation needs.",
    "404": "No such resource (or not this client's), or an id outside the id alphabet.",
    "406": "The client does not accept JSON.",
}
# What an operation with a request body may answer too.
WITH_BODY = {
    "409": "Conflict: insufficient funds, a state that does not allow it, a reused key "
    "(`Retry-After` when retrying helps).",
    "413": "The request body is over the size limit.",
    "415": "The body is not JSON (the API takes `application/json` only).",
    "422": "Well-formed, but the rules refuse it (`details` gives the reasons).",
}


def document_errors(result: dict, generator, request, public) -> dict:
    components = result.setdefault("components", {}).setdefault("schemas", {})
    components[COMPONENT] = ENVELOPE
    ref = {"$ref": f"#/components/schemas/{COMPONENT}"}
    for methods in result.get("paths", {}).values():
        for method, operation in methods.items():
            statuses = {**ANY, **(WITH_BODY if method in ("post", "put", "patch") else {})}
            responses = operation.setdefault("responses", {})
            for status, description in statuses.items():
                responses.setdefault(
                    status,
                    {"description": description, "content": {"application/json": {"schema": ref}}},
                )
    return result
