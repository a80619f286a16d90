"""`/healthz` and `/readyz` as a load balancer polls them: real database, real broker (the
suite's), and each of them made unreachable: without the broker the node is still ready (it
stores deals), without the database it is not."""

from __future__ import annotations

import time

import pytest
from django.db import connection

from rummy_ledger import health
from tests.ops.test_broker_outage import broker_at, closed_port
from tests.ops.test_database_faults import database_unreachable
from tests.ops.test_metrics import parse, sample
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


def test_readyz_stays_ready_and_says_degraded_when_the_broker_does_not_answer(client, settings):
    # a node that stores and acknowledges deals without the broker (tests/ops/test_broker_outage.py)
    # is one a load balancer keeps sending traffic to
    settings.METRICS_TOKEN = "health-test-token"
    with broker_at(f"redis://127.0.0.1:{closed_port()}/0"):
        started = time.monotonic()
        response = client.get("/readyz")
        elapsed = time.monotonic() - started
        scraped = client.get("/metrics", HTTP_AUTHORIZATION="Bearer health-test-token")
    assert elapsed < 1.5  # one try, no retries with backoff
    assert response.status_code == 200, response.content
    assert "Retry-After" not in response
    body = response.json()
    assert body["status"] == "degraded"
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["migrations"] == "ok"
    assert body["checks"]["broker"] == "not answering"  # why, only to the operator's token
    # and: the metrics say so too (the queue's depth is missing, the reading itself answered)
    samples = parse(scraped.content.decode())
    assert sample(samples, "rummy_broker_up") == 0
    assert not any(name.startswith("rummy_celery_queue_depth") for name in samples)
    assert sample(samples, "rummy_metrics_reading_up", reading="celery") == 1
    # and: once the broker answers again, so does the metric, and the status is "ready"
    assert client.get("/readyz").json()["status"] == "ready"
    scraped = client.get("/metrics", HTTP_AUTHORIZATION="Bearer health-test-token")
    assert sample(parse(scraped.content.decode()), "rummy_broker_up") == 1


def test_readyz_says_503_and_why_when_the_database_does_not_answer(client, settings):
    settings.METRICS_TOKEN = "health-test-token"
    with database_unreachable():
        response = client.get("/readyz")
        operators = client.get("/readyz", HTTP_AUTHORIZATION="Bearer health-test-token")
        guessed = client.get("/readyz", HTTP_AUTHORIZATION="Bearer guessed")
    assert response.status_code == 503
    assert response["Retry-After"] == "2"
    assert response.json()["status"] == "not ready"
    checks = response.json()["checks"]
    assert checks == {"database": "not answering", "migrations": "not checked", "broker": "ok"}
    assert guessed.json()["checks"] == checks
    # the operator's token reads why (the driver's first line, which may name hosts and users)
    said = operators.json()["checks"]["database"]
    assert said.startswith("not answering: ") and len(said) > len("not answering: ")
    # and: once it answers again, so does readyz
    connection.close()
    assert client.get("/readyz").status_code == 200


def test_readyz_says_503_when_neither_the_database_nor_the_broker_answers(client):
    with database_unreachable(), broker_at(f"redis://127.0.0.1:{closed_port()}/0"):
        response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["status"] == "not ready"
    checks = response.json()["checks"]
    assert (checks["database"], checks["broker"]) == ("not answering", "not answering")
    connection.close()
