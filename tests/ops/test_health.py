"""`/healthz` and `/readyz` as a load balancer polls them: real database, real broker (the
suite's), and each of them made unreachable."""

from __future__ import annotations

import time

import pytest
from django.db import connection

from rummy_ledger import health
from tests.ops.test_broker_outage import broker_at, closed_port
from tests.ops.test_database_faults import database_unreachable
from tests.tournaments.worker import private_queue

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(60)]


@pytest.fixture(autouse=True)
def broker_running():
    with private_queue():  # starts the embedded broker if the suite uses it and it is not up
        yield


def test_healthz_answers_without_the_database_or_the_broker(client, django_assert_num_queries):
    with django_assert_num_queries(0), broker_at(f"redis://127.0.0.1:{closed_port()}/0"):
        response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_readyz_is_ready_and_checks_the_migrations_only_until_they_are_applied(
    client, django_assert_max_num_queries
):
    health._migrations.update(applied=False, checked_at=float("-inf"))
    response = client.get("/readyz")
    assert response.status_code == 200, response.content
    assert response.json() == {
        "status": "ready",
        "checks": {"database": "ok", "migrations": "ok", "broker": "ok"},
    }
    # and: polled again, it costs one SELECT 1 (the migrations are known applied)
    with django_assert_max_num_queries(1):
        started = time.monotonic()
        assert client.get("/readyz").status_code == 200
    assert time.monotonic() - started < 0.5


def test_readyz_says_503_and_why_when_the_broker_does_not_answer(client):
    with broker_at(f"redis://127.0.0.1:{closed_port()}/0"):
        started = time.monotonic()
        response = client.get("/readyz")
    assert time.monotonic() - started < 1.5  # one try, no retries with backoff
    assert response.status_code == 503
    assert response["Retry-After"] == "2"
    body = response.json()
    assert body["status"] == "not ready"
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["broker"].startswith("not answering: ")


def test_readyz_says_503_and_why_when_the_database_does_not_answer(client):
    with database_unreachable():
        response = client.get("/readyz")
    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["database"].startswith("not answering: ")
    assert checks["migrations"] == "not checked"
    assert checks["broker"] == "ok"
    # and: once it answers again, so does readyz
    connection.close()
    assert client.get("/readyz").status_code == 200
