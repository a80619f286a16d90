"""Two nodes' Celery beats (real `celery beat` processes) on one database: only the one holding
the advisory lock sends; when it is killed -9 the other takes over within a sweep or two."""

import os
import re
import signal
import subprocess
import sys
import time

import pytest
from django.conf import settings

from tests.tournaments.worker import ROOT, database_url, private_queue, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(60)]

SENT = re.compile(r"Sending due task sweep-unsettled-deals", re.M)


class Beat:
    def __init__(self, queue: str, data_dir):
        data_dir.mkdir()
        env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
            "CELERY_TASK_DEFAULT_QUEUE": queue,
            "RUMMY_DATA_DIR": str(data_dir),  # each node's own schedule file
            "SETTLEMENT_SWEEP_SECONDS": "0.3",
        }
        self.log_path = data_dir / "beat.log"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "rummy_ledger", "beat", "--loglevel", "INFO"],
            cwd=ROOT, env=env, stdout=self.log_path.open("w"), stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip

    def sent(self) -> int:
        return len(SENT.findall(self.log_path.read_text()))

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)


def test_one_beat_sends_and_the_other_takes_over_when_it_is_killed(tmp_path):
    with private_queue() as queue:
        beats = [Beat(queue, tmp_path / "node-a"), Beat(queue, tmp_path / "node-b")]
        try:
            # given two beats running the same schedule
            assert wait_until(lambda: sum(b.sent() for b in beats) >= 4, timeout=30)
            time.sleep(1)
            # then one sends every sweep and the other none (it stands by)
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
