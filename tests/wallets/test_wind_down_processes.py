"""The wind-down as separate `manage.py wind_down` processes on the test database, CHUNK players to
a transaction: SIGKILLed once its first chunk is committed (inside a later chunk, most likely)
and run again, it misses nobody and repeats nothing; two runs at once create one refund per
player."""

import os
import re
import signal
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from django.db import transaction
from django.db.models import Count

from tests.builders import funded_player, make_api
from tests.tournaments.worker import database_url, wait_until
from tests.wallets.invariants import ledger_violations
from tests.wallets.payments import verified
from tests.wallets.wind_down import wind_down_approved
from wallets.models import Account, Withdrawal
from wallets.reconciliation import reconcile_run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.soak]

ROOT = Path(__file__).resolve().parents[2]
PLAYERS = 200
CHUNK = 5  # 40 chunks: the run is killed long before its end


def wind_down_process(tmp_path: Path, name: str) -> subprocess.Popen:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": database_url(),
        "DB_CONN_MAX_AGE": "0",
        "REAL_MONEY": "off",
        "WIND_DOWN_GRACE_MINUTES": "0",
    }
    command = [sys.executable, "manage.py", "wind_down", "--client", "gateway"]
    return subprocess.Popen(
        [*command, "--chunk", str(CHUNK), "--csv", str(tmp_path / f"{name}.csv")],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture
def funded(settings):
    """PLAYERS verified players with 100.00 each in their deposit bucket (one commit for all of
    them); then real money goes off and the wind-down is approved."""
    make_api("payments", name="gateway")
    players = [f"w{n:04d}" for n in range(PLAYERS)]
    with transaction.atomic():
        for p in players:
            verified(p)
            funded_player(p, "100.00")
    settings.REAL_MONEY = "off"
    wind_down_approved()
    return players


def refunds() -> int:
    return Withdrawal.objects.filter(reference__startswith="wind-down-").count()


def assert_one_refund_each_and_nothing_left(players: list[str]) -> None:
    per_player = dict(
        Withdrawal.objects.filter(reference__startswith="wind-down-")
        .values_list("player__external_id")
        .annotate(n=Count("id"))
    )
    assert per_player == {p: 1 for p in players}
    assert set(Withdrawal.objects.values_list("reference", flat=True)) == {
        f"wind-down-{p}" for p in players
    }
    left = Account.objects.filter(
        kind="player", bucket__in=["deposit", "winnings"], balance__gt=0
    ).count()
    assert left == 0
    assert reconcile_run(trigger="command").status == "clean"
    assert ledger_violations() == []


def test_killed_half_way_and_run_again_it_misses_nobody_and_repeats_nothing(funded, tmp_path):
    first = wind_down_process(tmp_path, "first")
    assert wait_until(lambda: refunds() > 0, timeout=120, every=0.02), first.communicate()
    first.send_signal(signal.SIGKILL)
    first.wait()
    killed_at = refunds()
    assert 0 < killed_at < PLAYERS  # it really was killed on the way
    assert killed_at % CHUNK == 0  # the chunk it was in left nothing behind

    second = wind_down_process(tmp_path, "second")
    out, err = second.communicate(timeout=300)

    assert second.returncode == 0, err
    assert f"{PLAYERS - killed_at} refund(s) issued now" in out
    assert_one_refund_each_and_nothing_left(funded)
    paid = Withdrawal.objects.filter(status="approved").values_list("payout", flat=True)
    assert set(paid) == {Decimal("100.00")}  # deposits back whole: no net winnings, no TDS


def test_two_runs_at_once_create_one_refund_per_player(funded, tmp_path):
    runs = [wind_down_process(tmp_path, "a"), wind_down_process(tmp_path, "b")]
    results = [r.communicate(timeout=300) for r in runs]

    assert [r.returncode for r in runs] == [0, 0], results
    assert_one_refund_each_and_nothing_left(funded)
    issued = [int(re.search(r"(\d+) refund\(s\) issued now", out)[1]) for out, _ in results]
    assert sum(issued) == PLAYERS
