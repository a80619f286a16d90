"""`Idempotency-Key`: a repeat gets the first response, byte for byte.

The rule, per operation in the schema: a write without a natural key of its own (the game writes:
open, deal, rejoin, split, cancel) requires the header; a write that carries one (a deposit's,
KYC report's or withdrawal's `reference`, a withdrawal's gateway result, the limits a PUT sets,
an exclusion that can only grow) takes it optionally: without it, a repeat is recognised by that
natural key and answered as the first was (200). A read never takes one.

The record is claimed as the last statement of the transaction of the write it guards, with the
response, by an INSERT on the unique (client, key): a write and its record commit together or not
at all, so a crash leaves nothing half-done. When the key is already recorded, the INSERT fails
on the unique index, the write is rolled back and the recorded response is replayed. Where that
transaction is the connection's own (under gunicorn, always), the COMMIT rides in the INSERT's
string, one round trip for both: a failed INSERT skips it, and Django's commit after it finds
nothing left to do (psycopg sends no COMMIT on an idle connection). A repeat that arrives while
the first is still committing waits on the unique index for a moment (IN_FLIGHT_WAIT), then gets
409 with `Retry-After`; a repeat with another body (or for
another endpoint) gets 409. Refusals (4xx) are stored and replayed like successes: the first
answer is the answer. The body is rendered once, stored as sent, and both the first answer and
every replay are those bytes. An operation may decline to be remembered (the batch of deals,
when a deal in it met contention): what it wrote commits, the key stays free, and a repeat runs
again.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable

from django.db import DatabaseError, IntegrityError, connection, transaction
from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter
from rest_framework import exceptions
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from rummy_ledger.api.codes import ApiErrorCode
from rummy_ledger.api.errors import exception_handler
from rummy_ledger.api.models import IdempotencyRecord
from rummy_ledger.errors import Conflict, DomainError, Retryable

HEADER = "Idempotency-Key"
# How long a repeat waits for a request with its key that is still committing.
IN_FLIGHT_WAIT = "300ms"
# 1 to 128 visible ASCII characters (a UUID, a ULID, the server's own request id...).
KEY_PATTERN = r"[!-~]{1,128}"
_KEY = re.compile(KEY_PATTERN)
_KEY_SCHEMA = {"type": "string", "minLength": 1, "maxLength": 128, "pattern": f"^{KEY_PATTERN}$"}
_KEY_HELP = (
    "1 to 128 visible ASCII. A repeat with the same key replays the first response (header "
    "`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_conflict`; "
    "a repeat while the first still runs is 409 `request_in_flight` with `Retry-After`."
)

IDEMPOTENCY_HEADER = OpenApiParameter(
    HEADER,
    _KEY_SCHEMA,
    OpenApiParameter.HEADER,
    required=True,
    description=f"Required: this write has no natural key of its own. {_KEY_HELP}",
)
IDEMPOTENCY_HEADER_OPTIONAL = OpenApiParameter(
    HEADER,
    _KEY_SCHEMA,
    OpenApiParameter.HEADER,
    required=False,
    description="Optional: this write is idempotent by its natural key (its `reference`, the "
    "withdrawal, the state it sets), and a repeat without the header is answered as the first "
    f"was. {_KEY_HELP}",
)


class KeyRequired(DomainError):
    code = ApiErrorCode.IDEMPOTENCY_KEY_REQUIRED


class KeyReused(Conflict):
    code = ApiErrorCode.IDEMPOTENCY_CONFLICT


class InFlight(Retryable):
    code = ApiErrorCode.REQUEST_IN_FLIGHT


def request_hash(request: Request) -> str:
    body = json.dumps(request.data, sort_keys=True, default=str)
    return hashlib.sha256(f"{request.method} {request.path}\n{body}".encode()).hexdigest()


def idempotent(
    request: Request,
    operation: Callable[[], Response],
    *,
    required: bool = True,
    remember: Callable[[Response], bool] = lambda response: True,
) -> Response | HttpResponse:
    """Run `operation` once per key: a repeat replays its first response. Where the key is not
    `required` (a write with a natural key of its own, such as a deposit's reference), a request
    without one simply runs. A response `remember` refuses is committed with what it wrote but
    the key is not claimed, so that a repeat runs again (a batch with a part to retry)."""
    if HEADER not in request.headers and not required:
        return operation()
    key, digest = _key_and_hash(request)
    client_id = request.auth.pk
    # The claim may commit its transaction itself only where that transaction is no savepoint.
    commits = not connection.in_atomic_block
    try:
        with transaction.atomic():
            response = operation()
            body = _rendered(response)
            _keep(client_id, key, digest, response, body, remember(response), commits=commits)
    except _Recorded:
        return _replay(client_id, key, digest)
    except Retryable:
        raise  # contention: nothing to remember, the client retries
    except (DomainError, exceptions.APIException) as exc:  # nothing written: the refusal alone
        response = exception_handler(exc, {})
        body = _rendered(response)
        try:
            with transaction.atomic():
                _claim(client_id, key, digest, response.status_code, body, commits=commits)
        except _Recorded:
            return _replay(client_id, key, digest)
    sent = _sent(body, response.status_code)
    if "Retry-After" in response:
        sent["Retry-After"] = response["Retry-After"]
    return sent


class _Recorded(Exception):
    """The key was recorded by an earlier request: roll this one back and replay that one."""


def _rendered(response: Response) -> str:
    return JSONRenderer().render(response.data).decode()


def _keep(
    client_id: int,
    key: str,
    digest: str,
    response: Response,
    body: str,
    remember: bool,
    *,
    commits: bool,
) -> None:
    """Claim the key with this answer (`_Recorded`: it was recorded before); an answer not to be
    remembered claims nothing, unless the key was recorded before (then `_Recorded` too)."""
    if remember:
        _claim(client_id, key, digest, response.status_code, body, commits=commits)
    elif IdempotencyRecord.objects.filter(client_id=client_id, key=key).exists():
        raise _Recorded


def key_read(request: Request) -> str:
    """The request's Idempotency-Key: `KeyRequired` when it is missing or not 1 to 128 visible
    ASCII."""
    key = request.headers.get(HEADER, "")
    if _KEY.fullmatch(key) is None:
        raise KeyRequired(f"this operation needs an {HEADER} header of 1 to 128 visible ASCII")
    return key


def _key_and_hash(request: Request) -> tuple[str, str]:
    return key_read(request), request_hash(request)


def _replayed(record: IdempotencyRecord, key: str, digest: str) -> HttpResponse:
    if record.request_hash != digest:
        raise KeyReused(f"{HEADER} {key!r} was used for a different request")
    response = _sent(record.body, record.status_code)
    response["Idempotent-Replayed"] = "true"
    return response


def _sent(body: str, status_code: int) -> HttpResponse:
    return HttpResponse(body, status=status_code, content_type="application/json")


def _claim(
    client_id: int, key: str, digest: str, status_code: int, body: str, *, commits: bool
) -> None:
    """Record the key with its answer as the last statement of the caller's transaction, and
    COMMIT it in the same round trip when it `commits` (the caller's is the connection's own
    transaction, not a savepoint): `_Recorded` when the key was recorded before. A repeat of a
    request still committing waits IN_FLIGHT_WAIT at most, then is `InFlight` (the wait's bound
    lasts until the commit)."""
    table = IdempotencyRecord._meta.db_table
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT set_config('lock_timeout', %s, true);"
                f"INSERT INTO {table} (client_id, key, request_hash, status_code, body, created_at)"
                " VALUES (%s, %s, %s, %s, %s, now())" + (";COMMIT" if commits else ""),
                [IN_FLIGHT_WAIT, client_id, key, digest, status_code, body],
            )
    except IntegrityError as exc:
        if getattr(exc.__cause__, "sqlstate", None) == "23505":  # unique_violation: recorded
            raise _Recorded from exc
        raise
    except DatabaseError as exc:
        if getattr(exc.__cause__, "sqlstate", None) == "55P03":
            raise InFlight("a request with this Idempotency-Key is still running") from exc
        raise


def _replay(client_id: int, key: str, digest: str) -> HttpResponse:
    record = IdempotencyRecord.objects.get(client_id=client_id, key=key)
    return _replayed(record, key, digest)
