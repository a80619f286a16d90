"""Domain errors shared by the apps; the API layer maps each to the JSON error envelope.

Every error carries a code from a catalogue: one `StrEnum` per app (`CommonErrorCode` here,
`wallets.errors.WalletErrorCode`, `tournaments.errors.GameErrorCode`,
`rummy_ledger.api.codes.ApiErrorCode`). Clients switch on codes, so a code means one thing only;
free strings are refused at construction.
"""

from enum import StrEnum
from typing import Any


class CommonErrorCode(StrEnum):
    INVALID = "invalid"
    NOT_FOUND = "not_found"
    CONFLICT = "conflict"
    BUSY = "busy"
    REJECTED = "rejected"
    FORBIDDEN = "forbidden"


class DomainError(Exception):
    """A refusal the caller can act on. `status` is the HTTP status the API answers with."""

    status = 400
    code: StrEnum = CommonErrorCode.INVALID

    def __init__(
        self, message: str, *, details: dict[str, Any] | None = None, code: StrEnum | None = None
    ):
        super().__init__(message)
        self.message = message
        self.details = details or {}
        if code is not None:
            if not isinstance(code, StrEnum):
                raise TypeError(f"error codes come from a catalogue enum, not {code!r}")
            self.code = code


class NotFound(DomainError):
    status = 404
    code = CommonErrorCode.NOT_FOUND


class Conflict(DomainError):
    status = 409
    code = CommonErrorCode.CONFLICT


class Retryable(Conflict):
    """Contention that goes away by itself: the client should retry after `retry_after` s."""

    code = CommonErrorCode.BUSY
    retry_after = 1


class Unprocessable(DomainError):
    status = 422
    code = CommonErrorCode.REJECTED


class Forbidden(DomainError):
    status = 403
    code = CommonErrorCode.FORBIDDEN
