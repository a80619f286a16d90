"""An Idempotency-Key claimed in the same statement as the write it guards: one round trip per write
on the hot paths.

The API layer (rummy_ledger.api.idempotency) owns the header and the replays; a hot-path service
(a deal's intake) takes a `Keyed` and claims the key with its own write, in one round trip, by
`idempotency_claim` (rummy_ledger/api/migrations/0004_idempotency_claim.pg.sql). A key already
recorded, or held by a request still running, is `KeyTaken`: nothing is written, and the API
layer replays the record or answers 409 `request_in_flight`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import connection

# How long a repeat waits for a request with its key that is still running.
CLAIM_WAIT = "300ms"


@dataclass
class Keyed:
    """The key of a write and the answer to record with it: `answer(stored)` is the (status,
    body) the client gets when the write succeeds; `record` renders it for the write to claim
    the key with, and keeps the last one rendered (the one recorded, once the write is done)."""

    client_id: int
    key: str
    request_hash: str
    answer: Callable[[Any], tuple[int, str]]
    recorded: tuple[int, str] | None = None

    def record(self, stored: Any) -> tuple[int, str]:
        self.recorded = self.answer(stored)
        return self.recorded


class KeyTaken(Exception):
    """The key is recorded (`outcome` "taken": its request hash, status and body) or held by a
    request still running ("in_flight")."""

    def __init__(
        self, outcome: str, request_hash: str | None, status_code: int | None, body: str | None
    ):
        super().__init__(outcome)
        self.outcome, self.request_hash = outcome, request_hash
        self.status_code, self.body = status_code, body


def key_claim(*, client_id: int, key: str, request_hash: str, status_code: int, body: str) -> None:
    """Claim the key with its answer (one round trip, in the caller's transaction if any)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT * FROM idempotency_claim(%s, %s, %s, %s, %s, %s)",
            [client_id, key, request_hash, status_code, body, CLAIM_WAIT],
        )
        outcome, *record = cursor.fetchone()
    if outcome != "claimed":
        raise KeyTaken(outcome, *record)
