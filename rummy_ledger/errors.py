"""Domain errors shared by the apps; the API maps each to the JSON error envelope."""

from typing import Any


class DomainError(Exception):
    """A refusal the caller can act on. `status` is the HTTP status the API answers with."""

    status = 400
    code = "invalid"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None, code: str = ""):
        super().__init__(message)
        self.message = message
        self.details = details or {}
        if code:
            self.code = code


class NotFound(DomainError):
    status = 404
    code = "not_found"


class Conflict(DomainError):
    status = 409
    code = "conflict"


class Retryable(Conflict):
    """Contention that goes away by itself: the client should retry after `retry_after` s."""

    code = "busy"
    retry_after = 1


class Unprocessable(DomainError):
    status = 422
    code = "rejected"
