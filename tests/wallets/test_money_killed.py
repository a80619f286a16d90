"""A web process SIGKILLed inside a withdrawal's transaction (after its first posting, before
the commit) loses and doubles nothing: the request, and a gateway's failure report, are rolled
back whole, and the gateway's retry then does them once."""

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import urllib.request
import uuid
from decimal import Decimal
from pathlib import Path

import pytest
from django.db import connection
from rest_framework.test import APIClient

from rummy_ledger.api.keys import api_client_create
from tests.tournaments.worker import database_url, wait_until
from tests.wallets.invariants import ledger_violations
from tests.wallets.payments import approve, verified, won
from wallets.models import Account, Transfer, Withdrawal

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.soak]

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SlowWeb:
    """tests/wallets/slow_web.py on the test database."""

    def __init__(self, pause: float = 60):
        self.port = free_port()
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "DATABASE_URL": database_url(),
            "DB_CONN_MAX_AGE": "0",
        }
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.wallets.slow_web", str(self.port), str(pause)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout.readline().strip() == "listening"

    def post_in_background(self, path: str, body: dict, key: str, headers: dict) -> None:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/api/v1/{path}",
            json.dumps(body).encode(),
            {**headers, "Content-Type": "application/json", "Idempotency-Key": key},
            method="POST",
        )

        def send():
            with contextlib.suppress(OSError):  # the server dies under it
                urllib.request.urlopen(request, timeout=120)

        threading.Thread(target=send, daemon=True).start()

    def wait_paused(self) -> None:
        line = []
        reader = threading.Thread(target=lambda: line.append(self.process.stdout.readline()))
        reader.start()
        reader.join(60)
        assert line and line[0].strip() == "paused", "the web process never paused"

    def kill(self) -> None:
        """SIGKILL, then wait until PostgreSQL has rolled its transaction back."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)
        self.process.stdout.close()
        assert wait_until(lambda: not others_in_transaction(), timeout=10)


def others_in_transaction() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND state LIKE 'idle in transaction%%' AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0] > 0


@pytest.fixture
def gateway():
    _, key = api_client_create(name=f"gateway-{uuid.uuid4().hex[:6]}", scopes=["payments"])
    header = {"Authorization": f"Api-Key {key}"}
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=header["Authorization"])
    return api, header


def balances(player: str) -> dict[str, Decimal]:
    rows = Account.objects.filter(player__external_id=player, bucket__in=["winnings", "pending"])
    return {a.bucket: a.balance.amount for a in rows}


def test_web_killed_inside_a_withdrawal_request_loses_and_doubles_nothing(gateway):
    api, header = gateway
    verified("w1")
    won("w1", "1000.00")
    body = {"amount": "600.00", "reference": "wd-1"}

    web = SlowWeb()
    try:
        web.post_in_background("players/w1/withdrawals", body, "key-1", header)
        web.wait_paused()  # the request transfer is posted, not committed
    finally:
        web.kill()

    assert not Withdrawal.objects.exists()
    assert not Transfer.objects.filter(kind="withdrawal").exists()
    assert balances("w1") == {"winnings": Decimal("1000.00"), "pending": 0}

    # the gateway retries with the same key: done once, and once only
    retried = api.post(
        "/api/v1/players/w1/withdrawals", body, format="json", HTTP_IDEMPOTENCY_KEY="key-1"
    )
    again = api.post(
        "/api/v1/players/w1/withdrawals", body, format="json", HTTP_IDEMPOTENCY_KEY="key-2"
    )
    assert retried.status_code == 201 and again.status_code == 200
    assert again.json()["withdrawal_id"] == retried.json()["withdrawal_id"]
    assert Withdrawal.objects.count() == 1
    assert balances("w1") == {"winnings": Decimal("400.00"), "pending": Decimal("600.00")}
    assert ledger_violations() == []


def test_web_killed_inside_a_failure_report_loses_and_doubles_nothing(gateway):
    api, header = gateway
    verified("w1")
    won("w1", "1000.00")
    w = api.post(
        "/api/v1/players/w1/withdrawals",
        {"amount": "600.00", "reference": "wd-1"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="k",
    ).json()["withdrawal_id"]
    approve(w)
    tds_before = Transfer.objects.filter(kind="reversal").count()

    web = SlowWeb()
    try:
        web.post_in_background(f"withdrawals/{w}/failed", {"reason": "bank"}, "fail-1", header)
        web.wait_paused()  # the approval is reversed, the return posted, nothing committed
    finally:
        web.kill()

    assert Withdrawal.objects.get(pk=w).status == "approved"
    assert Transfer.objects.filter(kind="reversal").count() == tds_before
    assert balances("w1") == {"winnings": Decimal("400.00"), "pending": 0}

    retried = api.post(
        f"/api/v1/withdrawals/{w}/failed", {"reason": "bank"}, format="json",
        HTTP_IDEMPOTENCY_KEY="fail-1",
    )  # fmt: skip
    assert retried.status_code == 200 and retried.json()["status"] == "failed"
    assert balances("w1") == {"winnings": Decimal("1000.00"), "pending": 0}
    assert Transfer.objects.filter(reverses__isnull=False).count() == 1
    assert ledger_violations() == []
