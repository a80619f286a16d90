"""`Idempotency-Key` for every write: a repeat gets the first response, byte for byte.

The record is claimed in the same transaction as the write it guards (INSERT ... ON CONFLICT DO
NOTHING on the unique (client, key)), and the response is stored in that transaction too: a write
and its record commit together or not at all, so a crash leaves nothing half-done. A repeat that
arrives while the first is still running waits on the unique index for a moment, then gets 409
with `Retry-After`; a repeat with another body (or for another endpoint) gets 409. Refusals (4xx)
are stored and replayed like successes: the first answer is the answer.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

from django.db import DatabaseError, connection, transaction
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.response import Response

from rummy_ledger.api_errors import exception_handler
from rummy_ledger.errors import Conflict, DomainError, Retryable
from tournaments.models import IdempotencyRecord

HEADER = "Idempotency-Key"
IN_FLIGHT_WAIT = "300ms"


class KeyRequired(DomainError):
    code = "idempotency_key_required"


class KeyReused(Conflict):
    code = "idempotency_conflict"


class InFlight(Retryable):
    code = "request_in_flight"


def request_hash(request: Request) -> str:
    body = json.dumps(request.data, sort_keys=True, default=str)
    return hashlib.sha256(f"{request.method} {request.path}\n{body}".encode()).hexdigest()


def idempotent(request: Request, operation: Callable[[], Response]) -> Response:
    key = request.headers.get(HEADER, "").strip()
    if not key or len(key) > 128:
        raise KeyRequired(f"every write needs an {HEADER} header of 1 to 128 characters")
    digest = request_hash(request)
    client = request.auth
    with transaction.atomic():
        if not _claim(client.pk, key, digest):
            return _replay(client.pk, key, digest)
        try:
            with transaction.atomic():
                response = operation()
        except Retryable:
            raise  # contention: nothing to remember, the client retries
        except (DomainError, exceptions.APIException) as exc:
            response = exception_handler(exc, {})
        IdempotencyRecord.objects.filter(client_id=client.pk, key=key).update(
            status_code=response.status_code, response=response.data
        )
    return response


def _claim(client_id: int, key: str, digest: str) -> bool:
    table = IdempotencyRecord._meta.db_table
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('lock_timeout', %s, true)", [IN_FLIGHT_WAIT])
            cursor.execute(
                f"INSERT INTO {table} (client_id, key, request_hash, created_at) "
                "VALUES (%s, %s, %s, now()) ON CONFLICT (client_id, key) DO NOTHING RETURNING id",
                [client_id, key, digest],
            )
            claimed = cursor.fetchone() is not None
            cursor.execute("SELECT set_config('lock_timeout', '0', true)")
    except DatabaseError as exc:
        if getattr(exc.__cause__, "sqlstate", None) == "55P03":
            raise InFlight("a request with this Idempotency-Key is still running") from exc
        raise
    return claimed


def _replay(client_id: int, key: str, digest: str) -> Response:
    record = IdempotencyRecord.objects.get(client_id=client_id, key=key)
    if record.request_hash != digest:
        raise KeyReused(f"{HEADER} {key!r} was used for a different request")
    response = Response(record.response, status=record.status_code)
    response["Idempotent-Replayed"] = "true"
    return response
