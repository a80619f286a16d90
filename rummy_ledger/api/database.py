"""The database's faults as API answers a client can act on.

- Every statement of an API request runs under a bounded lock wait and a statement timeout
  (`REQUEST_LOCK_TIMEOUT_MS`, `REQUEST_STATEMENT_TIMEOUT_MS`): a request never queues behind a
  long transaction, and a worker is never tied up by one statement. Running out is contention
  that passes: 409 + `Retry-After` (code `busy`), and nothing is written (the request's
  transaction rolls back).
- While the database does not answer (down, restarting, its connection cut), the API answers
  503 + `Retry-After` (code `service_unavailable`) in the JSON envelope, not an HTML 500; a
  server that answers nothing at all (frozen) is given up on at the request's deadline
  (`REQUEST_DEADLINE_SECONDS`, rummy_ledger.api.deadline) with the same answer. Django
  drops the broken connection at the end of the request and opens a new one for the next.

The bounds are session settings of the connection, set before a request's first statement
once per connection (outside a transaction, so they stay) and checked for free after that; a
management command or a Celery task on the same code runs without them. Behind a pool in
transaction mode (`DATABASE_POOLING=transaction`) a session is not the client's: there the bounds
are the web role's own settings, and none is set here.
"""

from __future__ import annotations

import contextlib
import weakref

import psycopg
from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError, connection
from django.http import JsonResponse

from rummy_ledger.api.codes import ApiErrorCode
from rummy_ledger.api.deadline import request_deadline
from rummy_ledger.api.errors import envelope
from rummy_ledger.errors import CommonErrorCode

API_PREFIX = "/api/"
# SQLSTATEs of contention that goes away by itself.
BUSY = {
    "55P03": "a lock wait ran out",  # lock_not_available (lock_timeout)
    "57014": "a statement ran out of time",  # query_canceled (statement_timeout)
    "40P01": "a deadlock was broken",  # deadlock_detected
    "40001": "a serialization conflict",  # serialization_failure
}
# SQLSTATEs of a database that is going away, starting or full; no SQLSTATE at all is a
# connection that failed or broke on the client's side.
UNAVAILABLE_STATES = {"57P01", "57P02", "57P03", "53300"}  # shutdown, crash, starting, too many

# Django's wrapped errors, and the driver's own: the request bounds are set on the driver's
# cursor (_BoundFirstQuery), outside Django's wrapping.
DATABASE_ERRORS = (DatabaseError, psycopg.Error)

# The raw connections whose session already carries the bounds (and which ones).
_bounded: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def limits() -> tuple[str, str]:
    return (
        f"{settings.REQUEST_LOCK_TIMEOUT_MS}ms",
        f"{settings.REQUEST_STATEMENT_TIMEOUT_MS}ms",
    )


SET_BOUNDS = (
    "SELECT set_config('lock_timeout', %s, false), set_config('statement_timeout', %s, false)"
)


def needs_bounds() -> bool:
    """Does this thread's connection lack the request bounds? They are remembered as set only
    when set outside a transaction (inside one, its rollback would undo them)."""
    if settings.REQUEST_BOUNDS_ON_ROLE:  # a pool in transaction mode: the web role has them
        return False
    raw = connection.connection
    return raw is None or _bounded.get(raw) != limits()


def _bounds_before_the_request() -> None:
    """A connection open already (a warm one) gets the bounds before the request's first
    statement, outside any transaction, once: a request that opens its own transaction at
    once (`rummy_ledger.api.idempotency`) would otherwise set them inside it, unremembered, at
    every request. A fault here is left to the request's first statement to meet and answer."""
    if connection.connection is None or connection.in_atomic_block or not needs_bounds():
        return
    with contextlib.suppress(*DATABASE_ERRORS):
        _set_bounds(connection.connection.cursor())


def _set_bounds(cursor) -> None:
    wanted = limits()
    cursor.execute(SET_BOUNDS, list(wanted))
    if not connection.in_atomic_block:
        _bounded[connection.connection] = wanted


class _BoundFirstQuery:
    """An execute wrapper: before the request's first statement, the bounds (one round trip on
    a new connection, none after); a request that never reads the database costs nothing.

    A first statement that must open its transaction (`SET TRANSACTION ...`, a snapshot's: with
    the key's client remembered, a read can be a request's first statement) runs first, and the
    bounds right after it, in the same transaction."""

    def __init__(self):
        self.checked = False

    def __call__(self, execute, sql, params, many, context):
        if self.checked:
            return execute(sql, params, many, context)
        self.checked = True
        if not needs_bounds():
            return execute(sql, params, many, context)
        cursor = context["cursor"].cursor  # the driver's cursor: no re-entry here
        if isinstance(sql, str) and sql.lstrip()[:15].upper() == "SET TRANSACTION":
            result = execute(sql, params, many, context)
            _set_bounds(cursor)
            return result
        _set_bounds(cursor)
        return execute(sql, params, many, context)


def fault_answer(exc: BaseException) -> JsonResponse | None:
    """The API's answer to a database fault, or None when `exc` is not one (a bug: 500)."""
    if not isinstance(exc, DATABASE_ERRORS):
        return None
    sqlstate = _sqlstate(exc)
    message = busy_message(exc)
    if message is not None:
        return _answer(409, CommonErrorCode.BUSY, message, settings.REQUEST_BUSY_RETRY_AFTER)
    connection_lost = isinstance(exc, (InterfaceError, psycopg.InterfaceError)) or (
        isinstance(exc, (OperationalError, psycopg.OperationalError))
        and (sqlstate is None or sqlstate.startswith("08") or sqlstate in UNAVAILABLE_STATES)
    )
    if connection_lost:
        _drop_connection()
        return _answer(
            503,
            ApiErrorCode.SERVICE_UNAVAILABLE,
            "The database is not available; nothing was written. Retry shortly.",
            settings.REQUEST_UNAVAILABLE_RETRY_AFTER,
        )
    return None


def busy_message(exc: BaseException) -> str | None:
    """The message of the 409 `busy` this database error is answered with, or None when it is
    not contention that passes."""
    sqlstate = _sqlstate(exc)
    if sqlstate not in BUSY:
        return None
    return f"The database is busy ({BUSY[sqlstate]}); nothing was written. Retry shortly."


def _sqlstate(exc: BaseException) -> str | None:
    """The driver's SQLSTATE behind Django's wrapper (also when a service re-raised the wrapper
    `from` itself, which hides the driver's error one link further down)."""
    seen: set[int] = set()
    pending = [exc]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if getattr(current, "sqlstate", None):
            return current.sqlstate
        pending += [current.__context__, current.__cause__]
    return None


def _drop_connection() -> None:
    """A lost connection is never reused: the next request (or retry) opens a new one. Django
    does this between requests too, except where a test client runs the request."""
    if not connection.in_atomic_block:
        with contextlib.suppress(DatabaseError):
            connection.close()


def _answer(status: int, code, message: str, retry_after: int) -> JsonResponse:
    response = JsonResponse(envelope(code, message), status=status)
    response["Retry-After"] = str(retry_after)
    return response


class DatabaseFaultsMiddleware:
    """Bounds every API request's statements, and answers database faults in the envelope."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not request.path_info.startswith(API_PREFIX):
            return self.get_response(request)
        with (
            request_deadline(settings.REQUEST_DEADLINE_SECONDS) as watch,
            connection.execute_wrapper(_BoundFirstQuery()),
        ):
            request.database_deadline = watch
            try:
                _bounds_before_the_request()
                return self.get_response(request)
            finally:
                if watch.abandoned:
                    _drop_connection()  # its socket was cut: never reused

    def process_exception(self, request, exc):
        if not request.path_info.startswith(API_PREFIX):
            return None
        watch = getattr(request, "database_deadline", None)
        if watch is not None and watch.abandoned and isinstance(exc, DATABASE_ERRORS):
            return deadline_answer()
        return fault_answer(exc)


def deadline_answer() -> JsonResponse:
    """The database did not answer within the request's deadline (rummy_ledger.api.deadline)."""
    _drop_connection()
    return _answer(
        503,
        ApiErrorCode.SERVICE_UNAVAILABLE,
        f"The database did not answer within {settings.REQUEST_DEADLINE_SECONDS:g} s. Retry "
        "shortly with the same Idempotency-Key (or reference): a write that did happen is "
        "answered as it was.",
        settings.REQUEST_UNAVAILABLE_RETRY_AFTER,
    )
