"""The API's own error codes, and the whole catalogue: every app's codes, one meaning each.

The apps hand their enums in from `AppConfig.ready()` (the `error_codes` kind of
`rummy_ledger/plugins.py`, offered by this layer's app): this layer names no app."""

from enum import StrEnum

from rummy_ledger.errors import CommonErrorCode


class ApiErrorCode(StrEnum):
    PARSE_ERROR = "parse_error"
    BAD_REQUEST = "bad_request"
    PAYLOAD_TOO_LARGE = "payload_too_large"
    URI_TOO_LONG = "uri_too_long"  # refused by gunicorn (rummy_ledger.api.worker)
    REQUEST_HEADERS_TOO_LARGE = "request_headers_too_large"  # the same
    NOT_AUTHENTICATED = "not_authenticated"
    AUTHENTICATION_FAILED = "authentication_failed"
    INVALID_KEY = "invalid_key"  # a key past its end: expired, or rotated out (401)
    NETWORK_REFUSED = "network_refused"  # a key used from outside its client's networks (403)
    PERMISSION_DENIED = "permission_denied"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    NOT_ACCEPTABLE = "not_acceptable"
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
    RATE_LIMITED = "rate_limited"  # over the client's rate limit (rummy_ledger.api.limits): 429
    IDEMPOTENCY_KEY_REQUIRED = "idempotency_key_required"
    IDEMPOTENCY_CONFLICT = "idempotency_conflict"
    REQUEST_IN_FLIGHT = "request_in_flight"
    SERVER_ERROR = "server_error"
    SERVICE_UNAVAILABLE = "service_unavailable"  # the database does not answer: retry (503)


_catalogue: list[type[StrEnum]] = [CommonErrorCode, ApiErrorCode]


def error_codes_register(enum: type[StrEnum]) -> None:
    """Add an app's codes to the catalogue (once: `ready()` may run again in a test)."""
    if enum not in _catalogue:
        _catalogue.append(enum)


def catalogue() -> tuple[type[StrEnum], ...]:
    return tuple(_catalogue)


def all_codes() -> list[str]:
    return [code.value for enum in _catalogue for code in enum]
