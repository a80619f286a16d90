"""Two nodes' Celery beats (real `celery beat` processes) on one database: only the one holding
the advisory lock sends; when it is killed -9 for good, or frozen (as PostgreSQL sees a lost
host: nothing closes its connection), the other takes the lock within the bound that
rummy_ledger/beat.py states, and a frozen leader that wakes stands by."""

import logging
import os
import re
import signal
import subprocess
import sys
import time

import psycopg
import pytest
from django.conf import settings

from rummy_ledger.beat import BEAT_LOCK, Leadership
from tests.architecture.test_settings import PRODUCTION, manage
from tests.tournaments.worker import ROOT, database_url, private_queue, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(60)]

SENT = re.compile(r"Sending due task settle-waiting-deals", re.M)
TAKEN = "beat: this node now schedules"
# A loaded 2-core machine: how late a process may be on the bound it keeps.
SLACK_S = 1.5


class Beat:
    def __init__(self, queue: str, data_dir, **extra_env: str):
        data_dir.mkdir()
        env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
            "CELERY_TASK_DEFAULT_QUEUE": queue,
            "RUMMY_DATA_DIR": str(data_dir),  # each node's own schedule file
            "SETTLEMENT_WAKE_SECONDS": "0.3",
            **extra_env,
        }
        self.log_path = data_dir / "beat.log"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "rummy_ledger", "beat", "--loglevel", "INFO"],
            cwd=ROOT, env=env, stdout=self.log_path.open("w"), stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip

    def log(self) -> str:
        return self.log_path.read_text()

    def sent(self) -> int:
        return len(SENT.findall(self.log()))

    def leads(self) -> bool:
        return TAKEN in self.log()

    def started(self) -> bool:
        return "beat: Starting..." in self.log()

    def signal(self, signum: int) -> None:
        os.killpg(self.process.pid, signum)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.signal(signal.SIGKILL)
        self.process.wait(timeout=10)


def leader_and_standby(beats: list[Beat]) -> tuple[Beat, Beat]:
    """Once both run and one has taken the lock (at its first check, not at a send)."""
    assert wait_until(lambda: all(b.started() for b in beats) and any(b.leads() for b in beats), 30)
    time.sleep(1)  # the standby has checked (and been refused) meanwhile
    leader, standby = sorted(beats, key=Beat.leads, reverse=True)
    assert leader.leads() and not standby.leads()
    return leader, standby


def takes_over_within(standby: Beat, bound_s: float) -> float:
    started = time.monotonic()
    assert wait_until(standby.leads, timeout=bound_s + 10, every=0.02)
    return time.monotonic() - started


def test_one_beat_sends_and_the_other_takes_over_when_it_is_killed(tmp_path):
    with private_queue() as queue:
        beats = [Beat(queue, tmp_path / "node-a"), Beat(queue, tmp_path / "node-b")]
        try:
            # given two beats running the same schedule
            assert wait_until(lambda: sum(b.sent() for b in beats) >= 4, timeout=30)
            time.sleep(1)
            # then one sends every wake and the other none (it stands by)
            leader, standby = sorted(beats, key=Beat.sent, reverse=True)
            assert leader.sent() >= 4
            assert standby.sent() == 0
            # when the leader's node dies
            leader.kill()
            # then the standby takes the lock and sends from then on
            assert wait_until(lambda: standby.sent() >= 2, timeout=10)
        finally:
            for beat in beats:
                beat.kill()


def test_a_leader_killed_for_good_is_replaced_within_the_check_interval(tmp_path):
    # the wake is not due during the test: the standby takes the lock at its own check, not
    # when an entry of its schedule comes due (every 2 s by default)
    with private_queue() as queue:
        beats = [
            Beat(queue, tmp_path / name, SETTLEMENT_WAKE_SECONDS="600")
            for name in ("node-a", "node-b")
        ]
        try:
            leader, standby = leader_and_standby(beats)
            # when the leader's process is killed, never to come back
            leader.kill()
            # then PostgreSQL frees the lock with its closed socket, and the standby's next
            # check (every BEAT_LEADER_CHECK_SECONDS) takes it
            took = takes_over_within(standby, settings.BEAT_LEADER_CHECK_SECONDS)
            assert took < settings.BEAT_LEADER_CHECK_SECONDS + SLACK_S, took
            assert leader.process.poll() is not None
        finally:
            for beat in beats:
                beat.kill()


def test_a_frozen_leader_loses_the_lock_within_the_bound_and_stands_by_when_it_wakes(tmp_path):
    # a frozen process keeps its connection open, as a lost host does in PostgreSQL's eyes:
    # only the lock session's idle_session_timeout frees the lock (a smaller one here, for time)
    timeout_s, check_s = 2.0, 0.5
    bounds = {
        "BEAT_LEADER_TIMEOUT_SECONDS": str(timeout_s),
        "BEAT_LEADER_CHECK_SECONDS": str(check_s),
    }
    with private_queue() as queue:
        beats = [Beat(queue, tmp_path / name, **bounds) for name in ("node-a", "node-b")]
        try:
            leader, standby = leader_and_standby(beats)
            assert wait_until(lambda: leader.sent() >= 2, timeout=10)
            # when the leader freezes (SIGSTOP) and stays frozen
            leader.signal(signal.SIGSTOP)
            # then the standby schedules within the timeout and a check, and sends
            took = takes_over_within(standby, timeout_s + check_s)
            assert took < timeout_s + check_s + SLACK_S, took
            assert wait_until(lambda: standby.sent() >= 2, timeout=10)
            # and when the old leader wakes, it finds its session ended and sends nothing more
            sent_by_old_leader = leader.sent()
            leader.signal(signal.SIGCONT)
            assert wait_until(lambda: "lost the database connection holding" in leader.log(), 10)
            time.sleep(1)
            assert leader.sent() == sent_by_old_leader
            assert standby.process.poll() is None and standby.sent() >= 4
        finally:
            for beat in beats:
                beat.kill()  # SIGKILL ends a stopped process too


def test_the_lock_session_ends_when_its_beat_stops_checking(settings, caplog):
    settings.BEAT_LEADER_TIMEOUT_SECONDS, settings.BEAT_LEADER_CHECK_SECONDS = 0.5, 0.2
    leadership = Leadership()
    other = psycopg.connect(database_url(), autocommit=True)
    try:
        assert leadership.check()
        # the session's own timeout, and TCP settings that fail a round trip to a server that
        # stopped answering within the same timeout (a unix socket ignores them)
        with leadership.connection.cursor() as cursor:
            cursor.execute("SHOW idle_session_timeout")
            assert cursor.fetchone() == ("500ms",)
        dsn = leadership.connection.connection.info.dsn
        for option in ("keepalives=1", "keepalives_idle=1", "tcp_user_timeout=500"):
            assert option in dsn.split(), dsn
        assert not other.execute("SELECT pg_try_advisory_lock(%s)", [BEAT_LOCK]).fetchone()[0]
        # when its beat does not check for longer than the timeout
        time.sleep(1.0)
        # then PostgreSQL has ended the session and the lock is free for another node
        assert other.execute("SELECT pg_try_advisory_lock(%s)", [BEAT_LOCK]).fetchone()[0]
        # and the old holder's next check says it no longer leads
        with caplog.at_level(logging.WARNING, logger="rummy_ledger.beat"):
            assert not leadership.check()
        assert "lost the database connection holding the lock" in caplog.text
        assert not leadership.check()  # and it cannot take it back while another holds it
    finally:
        leadership.release()
        other.close()


def test_a_check_interval_above_half_the_timeout_refuses_to_start():
    # a leader must check at least twice within its session's timeout, or it would lose the lock
    # between two checks of a healthy node
    result = manage(
        "check", BEAT_LEADER_CHECK_SECONDS="3", BEAT_LEADER_TIMEOUT_SECONDS="5", **PRODUCTION
    )
    assert result.returncode != 0
    assert "BEAT_LEADER_CHECK_SECONDS is above zero and at most half" in result.stderr
    assert manage("check", BEAT_LEADER_CHECK_SECONDS="2.5", **PRODUCTION).returncode == 0
