"""Database faults as the API answers them, with real concurrent connections:

- a request that would wait behind another transaction's locks gives up within the bound and
  answers 409 + Retry-After (before: the idempotency claim left `lock_timeout` at 0, so a game
  open waited as long as any transaction that had touched the player's accounts);
- a statement that runs out of time answers the same;
- a database that does not answer gets 503 + Retry-After in the envelope, not an HTML 500.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from contextlib import contextmanager
from decimal import Decimal

import psycopg
import pytest
from django.conf import settings
from django.db import connection
from django.http import HttpResponse
from django.test import RequestFactory, override_settings

from rummy_ledger.api import database
from tests.architecture.test_openapi import conforms
from tests.builders import Server, funded_player, template
from tests.ops.test_broker_outage import closed_port
from tournaments.models import Game
from wallets.models import Transfer

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(60)]


@pytest.fixture(autouse=True)
def fresh_connection_afterwards():
    """The tests change this thread's connection (its session settings, its address): the next
    test gets a new one."""
    yield
    connection.close()


def openapi_json() -> dict:
    """The schema, as JSON Schema."""
    from drf_spectacular.generators import SchemaGenerator

    from tests.architecture.test_openapi import _as_json_schema

    return _as_json_schema(SchemaGenerator().get_schema(request=None, public=True))


HOLD = 8.0  # seconds the other transaction keeps its locks (today's code waited all of it)


def other_connection() -> psycopg.Connection:
    s = connection.settings_dict
    return psycopg.connect(
        dbname=s["NAME"], user=s["USER"], host=s["HOST"], port=s["PORT"] or 5432,
        password=s.get("PASSWORD") or None,
    )  # fmt: skip


@contextmanager
def accounts_held(external_id: str):
    """Another transaction updates the player's accounts and keeps them locked for HOLD s."""
    other = other_connection()
    other.execute(
        "UPDATE wallets_account SET balance = balance WHERE player_id = "
        "(SELECT id FROM wallets_player WHERE external_id = %s)",
        [external_id],
    )
    release = threading.Timer(HOLD, other.rollback)
    release.start()
    try:
        yield
    finally:
        release.cancel()
        other.rollback()
        other.close()


def assert_retryable_busy(response, bound_s: float, elapsed: float) -> None:
    assert response.status_code == 409, response.content
    assert response["Retry-After"] == "1"
    # the request's bound, or the ledger's own lock wait (LEDGER_LOCK_TIMEOUT_MS) where it locks
    assert response.json()["error"]["code"] in ("busy", "ledger_busy")
    assert elapsed < bound_s + 1.5, f"waited {elapsed:.1f} s"


@pytest.mark.parametrize(
    "bounds",
    [
        {"REQUEST_LOCK_TIMEOUT_MS": 1000},  # the lock wait runs out
        {"REQUEST_LOCK_TIMEOUT_MS": 20000, "REQUEST_STATEMENT_TIMEOUT_MS": 1000},  # the statement
    ],
    ids=["lock_timeout", "statement_timeout"],
)
def test_a_game_open_behind_a_transaction_holding_the_players_accounts_answers_409(bounds):
    # given: a funded player whose accounts another transaction has updated and holds
    server = Server()
    template("points-1", "points", point_value=Decimal("1.00"))
    for p in ("a", "b"):
        funded_player(p, "100.00")
    transfers = Transfer.objects.count()
    with override_settings(**bounds), accounts_held("a"):
        # when: a game server opens a game for that player
        started = time.monotonic()
        response = server.open("g1", "points-1", ["a", "b"], key="open-1")
        elapsed = time.monotonic() - started
    # then: a retryable 409 within the bound, and nothing was written
    assert_retryable_busy(response, settings.LEDGER_LOCK_TIMEOUT_MS / 1000, elapsed)
    assert not Game.objects.exists()
    assert Transfer.objects.count() == transfers
    # and: the same request, retried once the other transaction is gone, opens the game
    retried = server.open("g1", "points-1", ["a", "b"], key="open-1")
    assert retried.status_code == 201, retried.content


def test_a_read_behind_a_lock_answers_409_busy_as_its_schema_documents():
    """Reads answer 409 busy + Retry-After too (the schema says so)."""
    openapi = openapi_json()
    server = Server()
    funded_player("a", "100.00")
    other = other_connection()
    other.execute("LOCK TABLE wallets_player IN ACCESS EXCLUSIVE MODE")
    try:
        with override_settings(REQUEST_LOCK_TIMEOUT_MS=500):
            started = time.monotonic()
            response = server.get("players/a/wallet")
            elapsed = time.monotonic() - started
    finally:
        other.rollback()
        other.close()
    assert_retryable_busy(response, 0.5, elapsed)
    conforms(openapi, "/api/v1/players/{player_id}/wallet", "get", response)


def test_the_request_bounds_are_session_settings_of_the_connection():
    def view(request):
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")  # the request's first statement brings the bounds
        return HttpResponse()

    with override_settings(REQUEST_LOCK_TIMEOUT_MS=1234, REQUEST_STATEMENT_TIMEOUT_MS=4321):
        database.DatabaseFaultsMiddleware(view)(RequestFactory().get("/api/v1/"))
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('lock_timeout'), current_setting('statement_timeout')"
        )
        assert cursor.fetchone() == ("1234ms", "4321ms")


@contextmanager
def database_unreachable():
    """This thread's connection points at a port nothing listens on, then back."""
    settings_dict = connection.settings_dict
    previous = dict(settings_dict)
    connection.close()
    settings_dict.update(HOST="127.0.0.1", PORT=str(closed_port()))
    try:
        yield
    finally:
        connection.close()
        settings_dict.clear()
        settings_dict.update(previous)


@pytest.mark.parametrize("call", ["read", "write"])
def test_the_api_answers_503_with_retry_after_while_the_database_is_down(call):
    server = Server()
    with database_unreachable():
        if call == "read":
            response = server.get("templates")
        else:
            response = server.open("g1", "points-1", ["a", "b"])
    assert response.status_code == 503, response.content
    assert response["Content-Type"] == "application/json"
    assert response["Retry-After"] == "2"
    assert response.json()["error"]["code"] == "service_unavailable"
    conforms(openapi_json(), "/api/v1/templates" if call == "read" else "/api/v1/games",
             "get" if call == "read" else "post", response)  # fmt: skip
    # and: once it answers again, so does the API
    assert server.get("templates").status_code == 200


def test_a_connection_cut_in_the_middle_of_a_request_answers_503_and_the_next_one_works():
    server = Server()
    assert server.get("templates").status_code == 200
    # when: the server ends this process's connection (as a database restart does)
    with other_connection() as other:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            pid = cursor.fetchone()[0]
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
    response = server.get("templates")
    # then
    assert response.status_code == 503, response.content
    assert response.json()["error"]["code"] == "service_unavailable"
    assert server.get("templates").status_code == 200


@contextmanager
def backend_frozen():
    """The server process behind this thread's connection stops (SIGSTOP) and answers nothing,
    as in a frozen database: no timeout of the server's own can fire. Only this test's backend
    of the shared server is stopped; SIGCONT afterwards, whatever happens."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    try:
        os.kill(pid, signal.SIGSTOP)
    except PermissionError:
        pytest.skip("this user may not signal the database's processes")
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


@pytest.mark.parametrize("stuck_in", ["a query", "setting the request bounds"])
def test_a_frozen_database_answers_503_with_retry_after_at_the_request_deadline(stuck_in):
    # given: the API's connection is open, then its server process freezes
    server = Server()
    assert server.get("templates").status_code == 200
    if stuck_in == "setting the request bounds":  # as on a connection opened meanwhile
        database._bounded.pop(connection.connection)
    with override_settings(REQUEST_DEADLINE_SECONDS=1), backend_frozen():
        # when
        started = time.monotonic()
        response = server.get("templates")
        elapsed = time.monotonic() - started
    # then: the web process gave up by itself at its deadline (before: it waited for the freeze)
    assert response.status_code == 503, response.content
    assert 1 <= elapsed < 1.5, f"answered after {elapsed:.2f} s"
    assert response["Retry-After"] == "2"
    error = response.json()["error"]
    assert error["code"] == "service_unavailable"
    assert "did not answer within 1 s" in error["message"]
    conforms(openapi_json(), "/api/v1/templates", "get", response)
    # and: the abandoned connection is not reused; the next request gets a new one
    assert server.get("templates").status_code == 200
