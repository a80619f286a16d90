"""The state machine's own PostgreSQL and Redis: the embedded servers (rummy_ledger/dev/embedded.py)
of a temporary data dir, so that restarting PostgreSQL or stopping the broker never touches the
servers the rest of the suite shares.

`run_on_own_servers` is the parent's side: a child pytest of the machine's runs
(tests/simulation/runs.py) with that data dir and none of the shared servers' URLs, so its
start-up (`environ_prepare`) starts servers of the dir's own; the servers are stopped and the dir
removed afterwards, whatever became of the child. The rest is the child's side: the data dir
checked to be its own, and the two faults, each proven to have happened (the server's pid
changed) on a process proven to be the dir's (its working directory)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import connections

from rummy_ledger.dev import embedded

ROOT = Path(__file__).resolve().parents[2]
OWN_DIR = "SIM_OWN_DATA_DIR"  # the child's environment: the data dir that is the machine's own
SHARED = ("DATABASE_URL", "CELERY_BROKER_URL", "RATE_LIMIT_REDIS_URL")


def run_on_own_servers(*pytest_args: str, passed: int) -> None:
    """The machine's runs chosen by `pytest_args` in a child pytest on servers of its own, its
    output printed (the failing sequence, on a failure). Exactly `passed` tests must pass."""
    directory = Path(tempfile.mkdtemp(prefix="rummy-sim-"))
    # not the shared servers' URLs, nor the xdist worker's identity of this process
    env = {
        k: v for k, v in os.environ.items()
        if k not in SHARED and not k.startswith(("PYTEST_XDIST", "PYTEST_CURRENT_TEST"))
    }  # fmt: skip
    env.update(RUMMY_EMBEDDED="1", RUMMY_DATA_DIR=str(directory), **{OWN_DIR: str(directory)})
    # --reuse-db: a new data dir has no test database yet, and none is dropped at the end
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0",
               "--reuse-db", "--durations=5"]  # fmt: skip
    log = directory / "pytest.log"
    try:
        with open(log, "w") as out:
            child = subprocess.Popen(
                [*command, "tests/simulation/runs.py", *pytest_args],
                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
            try:
                child.wait()
            finally:
                _end(child)
        output = log.read_text()
        print(output)  # pytest shows it under the failure
        summary = output.strip().splitlines()[-1] if output.strip() else ""
        assert child.returncode == 0, f"the machine's runs failed: {summary}"
        counts = re.findall(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)", summary)
        assert counts == [(str(passed), "passed")], summary
    finally:
        embedded.stop_postgres(directory)
        embedded.stop_redis(directory)
        shutil.rmtree(directory, ignore_errors=True)


def _end(child: subprocess.Popen) -> None:
    """A child still running (the parent failed or timed out): interrupted, so that its fixtures
    stop its Celery worker, and killed if it does not end."""
    if child.poll() is not None:
        return
    child.send_signal(signal.SIGINT)
    try:
        child.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()


def own_data_dir() -> Path:
    """The data dir of the servers this process runs on, checked to be the machine's own."""
    named = os.environ.get(OWN_DIR)
    assert named, "the machine runs on servers of its own: run tests/simulation/test_api_machine.py"
    directory = Path(named).resolve()
    assert directory == settings.DATA_DIR != (ROOT / ".data").resolve(), settings.DATA_DIR
    assert embedded.postgres_attached(directory), "the database is not the data dir's own"
    broker = settings.CELERY_BROKER_URL
    assert broker == embedded.redis_url(directory), broker
    return directory


def _running_in(pid: int | None, directory: Path) -> int:
    """`pid`, checked to be a server of `directory` (PostgreSQL and Redis run in their data dir)."""
    assert pid is not None, f"no server runs in {directory}"
    cwd = Path(os.readlink(f"/proc/{pid}/cwd")).resolve()
    assert cwd == directory.resolve(), (pid, cwd, directory)
    return pid


def postgres_restart(directory: Path) -> tuple[int, int]:
    """PostgreSQL of `directory` stopped (fast shutdown) and started again on the same data; the
    postmaster's pid before and after. The live server and the worker replace their broken
    connections by themselves; this process's are closed here."""
    before = _running_in(embedded.postgres_pid(directory), directory / "pg")
    embedded.stop_postgres(directory)
    assert embedded.postgres_pid(directory) is None, "PostgreSQL did not stop"
    embedded.ensure_postgres(directory)
    after = _running_in(embedded.postgres_pid(directory), directory / "pg")
    assert after != before, "PostgreSQL did not restart"
    connections.close_all()
    return before, after


@contextmanager
def broker_stopped(directory: Path, seconds: float):
    """Redis of `directory` (the broker and the rate limits' store) stopped for `seconds`, the
    body run meanwhile; then started again on the same data (its queues kept)."""
    before = _running_in(embedded.redis_pid(directory), directory)
    embedded.stop_redis(directory)
    assert embedded.redis_pid(directory) is None, "Redis did not stop"
    began = time.monotonic()
    try:
        yield
        time.sleep(max(0.0, seconds - (time.monotonic() - began)))
    finally:
        embedded.ensure_redis(directory)
    after = _running_in(embedded.redis_pid(directory), directory)
    assert after != before, "Redis did not restart"
