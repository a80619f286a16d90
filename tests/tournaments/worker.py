"""A real `celery worker` process for tests: its own queue on the shared embedded broker (so
people running the suite at the same time never take each other's tasks) and the test database."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from django.conf import settings
from django.db import connection

from rummy_ledger.celery import app as celery_app
from rummy_ledger.dev import embedded

ROOT = Path(__file__).resolve().parents[2]


# The embedded Redis this test session started, if any (tests/conftest.py stops it at the end).
STARTED_BROKER: list = []


def database_url() -> str:
    s = connection.settings_dict
    host = quote(s["HOST"] or "", safe="")
    return f"postgres://{s['USER']}@{host}:{s['PORT']}/{s['NAME']}"


@contextmanager
def private_queue():
    """Route this process's tasks to a queue no one else's worker listens on."""
    embedded_broker = embedded.redis_url(settings.DATA_DIR) == settings.CELERY_BROKER_URL
    if embedded_broker and embedded.ensure_redis(settings.DATA_DIR):
        STARTED_BROKER.append(settings.DATA_DIR)  # stopped when the test session ends
    queue = f"test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    previous = celery_app.conf.task_default_queue
    celery_app.conf.task_default_queue = queue
    celery_app.amqp.__dict__.pop("queues", None)
    try:
        yield queue
    finally:
        celery_app.conf.task_default_queue = previous


class Worker:
    """`pause_in_settlement` seconds: the worker sleeps inside each settlement transaction
    (tests/tournaments/slow_worker.py), so a test can kill it there."""

    def __init__(
        self,
        queue: str,
        concurrency: int = 2,
        extra_env: dict | None = None,
        pause_in_settlement: float | None = None,
    ):
        env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
            "CELERY_TASK_DEFAULT_QUEUE": queue,
            "DB_CONN_MAX_AGE": "600",
            **(extra_env or {}),
        }
        env.pop("CELERY_TASK_ALWAYS_EAGER", None)
        self.log = open(f"/tmp/{queue}-{time.monotonic_ns()}.log", "w")  # noqa: SIM115
        if pause_in_settlement is None:
            program = [sys.executable, "-m", "celery", "-A", "rummy_ledger", "worker"]
        else:
            program = [
                sys.executable,
                "-m",
                "tests.tournaments.slow_worker",
                str(pause_in_settlement),
            ]
        self.process = subprocess.Popen(
            [
                *program,
                "-Q", f"{queue},{queue}.webhooks", "-n", f"{queue}-{uuid.uuid4().hex[:6]}@%h",
                "--concurrency", str(concurrency), "--loglevel", "WARNING",
                "--without-gossip", "--without-mingle", "--without-heartbeat",
            ],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip

    def kill(self) -> None:
        """SIGKILL the worker and its pool children (its own process group)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)
        self.log.close()

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.close()


def wait_until(condition, timeout: float = 60.0, every: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(every)
    return False
