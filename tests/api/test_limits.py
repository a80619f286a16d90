"""Rate limits per client (rummy_ledger/api/limits.py): a token bucket in a real Redis, shared by
every process; past it 429 `rate_limited` with Retry-After and nothing written; one script call
a lease of tokens; Redis down or hung lets requests through (fail open), asking it once per
interval."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
import redis
import requests

from rummy_ledger.api import limits
from rummy_ledger.api.models import ApiClient
from rummy_ledger.dev import embedded
from rummy_ledger.dev.management.commands.serve import WEB_WORKER
from tests.api.conftest import assert_envelope
from tests.builders import HttpApi, make_api
from tests.tournaments.worker import database_url
from wallets.models import Transfer

pytestmark = pytest.mark.timeout(120)


def _redis(url: str) -> redis.Redis:
    return redis.Redis.from_url(url.replace("redis+socket://", "unix://"))


@pytest.mark.django_db
def test_a_bucket_gives_its_burst_then_says_how_long_until_the_next_token(rate_limits, settings):
    settings.API_RATE_BURST_SECONDS = 2
    _, client = make_api("games")
    client.rate_limit = 10  # a burst of 20, a token every 0.1 s

    waits = [limits.bucket_take(client) for _ in range(21)]

    assert waits[:20] == [0.0] * 20
    assert 0 < waits[20] <= 0.1
    assert limits.client_limit(client) == (10, 20)


@pytest.mark.django_db(transaction=True)
def test_over_its_limit_a_client_is_answered_429_and_nothing_is_written(rate_limits, live_server):
    gateway = HttpApi(live_server.url, "payments", name="gateway")
    ApiClient.objects.filter(pk=gateway.client.pk).update(rate_limit=1)  # a burst of 2 (2 s)

    # when: deposits as fast as it can, until one is refused
    answers = []
    while not answers or answers[-1].status_code != 429:
        assert len(answers) < 10, [a.status_code for a in answers]
        body = {"amount": "10.00", "reference": f"dep-{len(answers)}"}
        answers.append(gateway.send("POST", "players/asha/deposits", body))

    # then
    refused = answers[-1]
    assert {a.status_code for a in answers[:-1]} == {201} and len(answers) >= 3
    assert refused.headers["Retry-After"] == "1"
    assert refused.headers["Content-Type"] == "application/json"
    error = refused.json()["error"]
    assert error["code"] == "rate_limited"
    assert error["details"] == {"limit": 1, "burst": 2, "retry_after": 1}
    assert Transfer.objects.count() == len(answers) - 1  # the refused deposit wrote nothing
    time.sleep(1.0)  # Retry-After
    body = {"amount": "10.00", "reference": f"dep-{len(answers) - 1}"}
    assert gateway.send("POST", "players/asha/deposits", body).status_code == 201


@pytest.mark.django_db
def test_a_client_without_a_limit_of_its_own_has_the_services(rate_limits, settings):
    settings.API_RATE_LIMIT, settings.API_RATE_BURST_SECONDS = 1, 1
    api, _ = make_api("games")

    first, second = api.get("/api/v1/templates"), api.get("/api/v1/templates")

    assert first.status_code == 200
    error = assert_envelope(second, 429, "rate_limited")
    assert error["details"]["limit"] == 1 and second["Retry-After"] == "1"


@pytest.mark.django_db
def test_a_lease_of_tokens_costs_one_script_call(rate_limits, settings):
    settings.API_RATE_LIMIT, settings.API_RATE_LEASE_SECONDS = 500, 1.0  # leases of 500
    api, client = make_api("games")
    server = _redis(rate_limits)
    assert api.get("/api/v1/templates").status_code == 200  # a lease taken; the script loaded
    server.config_resetstat()

    for _ in range(3):
        assert api.get("/api/v1/templates").status_code == 200
    in_lease = server.info("commandstats")
    waits = [limits.bucket_take(client) for _ in range(600)]

    assert "cmdstat_evalsha" not in in_lease  # the first request's lease still held
    assert waits == [0.0] * 600
    stats = server.info("commandstats")
    assert stats["cmdstat_evalsha"]["calls"] == 1  # 496 from the lease, then one more lease
    assert not {"cmdstat_eval", "cmdstat_script", "cmdstat_get", "cmdstat_set"} & set(stats)


@pytest.mark.django_db
def test_a_lease_lasts_its_seconds_then_the_bucket_is_asked_again(rate_limits, settings):
    settings.API_RATE_LIMIT, settings.API_RATE_LEASE_SECONDS = 100, 0.2  # leases of 20
    _, client = make_api("games")
    server = _redis(rate_limits)
    assert limits.bucket_take(client) == 0.0
    server.config_resetstat()

    assert limits.bucket_take(client) == 0.0  # from the lease
    time.sleep(0.25)
    assert limits.bucket_take(client) == 0.0  # the lease ran out: its 18 tokens dropped

    assert server.info("commandstats")["cmdstat_evalsha"]["calls"] == 1


# --- two processes, one bucket ------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def gunicorn(rate_limits, live_server, settings):
    """A second web process (gunicorn, as `serve` runs it) on the test database and the same
    Redis, buckets of one second's tokens as in this process."""
    settings.API_RATE_BURST_SECONDS = 1
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "RATE_LIMIT_REDIS_URL": rate_limits,
        "API_RATE_BURST_SECONDS": "1",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "rummy_ledger.wsgi", "--bind", f"127.0.0.1:{port}",
         "--workers", "1", "--worker-class", WEB_WORKER],
        cwd=settings.BASE_DIR, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, "gunicorn exited"
            try:
                requests.get(f"{base}/healthz", timeout=10)
                break
            except requests.RequestException:  # not listening yet, or still starting
                assert time.monotonic() < deadline, "gunicorn does not answer"
                time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.django_db(transaction=True)
def test_two_processes_share_one_bucket(gunicorn, live_server):
    lobby = HttpApi(live_server.url, "games", name=f"lobby-{uuid.uuid4().hex[:6]}")
    ApiClient.objects.filter(pk=lobby.client.pk).update(rate_limit=1)  # one token, one a second
    here, there = live_server.url, gunicorn

    def pair(first: str, second: str) -> tuple[int, int] | None:
        """A token taken through one process, then one through the other at once (None: the
        machine was too slow to tell, the bucket refilled between them)."""
        started = time.monotonic()
        lobby.base_url = first
        one = lobby.send("GET", "templates")
        lobby.base_url = second
        two = lobby.send("GET", "templates")
        return (one.status_code, two.status_code) if time.monotonic() - started < 0.9 else None

    for first, second in ((here, there), (there, here)):
        for _ in range(5):
            time.sleep(1.1)  # the bucket is full again
            statuses = pair(first, second)
            if statuses is not None:
                break
        assert statuses == (200, 429), (first, statuses)


# --- Redis down or hung: fail open ---------------------------------------------------------------


def _answers(url: str) -> bool:
    try:
        return _redis(url).ping()
    except redis.RedisError:
        return False


@pytest.mark.django_db
def test_with_redis_down_requests_pass_and_the_outage_is_logged_once(rate_limits, settings, caplog):
    settings.API_RATE_LIMIT, settings.API_RATE_BURST_SECONDS = 1, 1
    settings.RATE_LIMIT_REDIS_RETRY_SECONDS = 0  # every request asks it again
    api, _ = make_api("games")
    directory = Path(rate_limits.removeprefix("redis+socket://")).parent
    embedded.stop_redis(directory)
    while _answers(rate_limits):
        time.sleep(0.05)

    try:
        with caplog.at_level(logging.INFO, logger=limits.__name__):
            down = [api.get("/api/v1/templates").status_code for _ in range(4)]
    finally:
        embedded.ensure_redis(directory)
    with caplog.at_level(logging.INFO, logger=limits.__name__):
        back = [api.get("/api/v1/templates").status_code for _ in range(2)]

    assert down == [200] * 4  # over its limit of 1, but unlimited while Redis is down
    assert back == [200, 429]
    records = [r for r in caplog.records if r.name == limits.__name__]
    assert [r.levelname for r in records] == ["WARNING", "INFO"]
    assert "rate limits off" in records[0].getMessage()


@pytest.mark.django_db
def test_a_hung_redis_is_asked_once_per_retry_interval(rate_limits, settings):
    listener = socket.socket()  # accepts connections, never answers
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted = []

    def accept() -> None:
        while True:
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    settings.RATE_LIMIT_REDIS_URL = f"redis://127.0.0.1:{listener.getsockname()[1]}/0"
    settings.RATE_LIMIT_REDIS_RETRY_SECONDS = 60
    api, _ = make_api("games")
    try:
        statuses = [api.get("/api/v1/templates").status_code for _ in range(5)]
    finally:
        listener.close()
        for connection in accepted:
            connection.close()

    assert statuses == [200] * 5
    assert len(accepted) == 1  # the first request waited out the timeout; the rest skipped it
