"""`manage.py serve` as an operator runs it: a real process on its own embedded PostgreSQL and
Redis (a data dir of its own), killed children, a killed database, a busy port, SIGTERM."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings

from rummy_ledger import embedded
from rummy_ledger.instance import HEADER

pytestmark = pytest.mark.timeout(120)


def serve_env(data_dir: Path) -> dict[str, str]:
    """The embedded defaults under `data_dir`, whatever database and broker the suite uses."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    return {**env, "RUMMY_DATA_DIR": str(data_dir), "PYTHONUNBUFFERED": "1"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def data_dir():
    # Short: unix socket paths (PostgreSQL's, Redis's) are limited to ~100 characters.
    path = Path(tempfile.mkdtemp(prefix="rl-ops-", dir="/tmp"))
    yield path
    embedded.stop_redis(path)  # only does something if a failed test left them running
    embedded.stop_postgres(path)
    shutil.rmtree(path, ignore_errors=True)


class Serve:
    def __init__(self, data_dir: Path, port: int):
        self.port = port
        self.log_path = data_dir / "serve.log"
        self.process = subprocess.Popen(
            [sys.executable, str(settings.BASE_DIR / "manage.py"), "serve", "--no-demo",
             "--port", str(port)],
            env=serve_env(data_dir), stdout=self.log_path.open("w"), stderr=subprocess.STDOUT,
        )  # fmt: skip

    def log(self) -> str:
        return self.log_path.read_text()

    def wait_for_line(self, pattern: str, timeout: float = 60) -> re.Match:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = re.search(pattern, self.log(), re.MULTILINE)
            if match:
                return match
            assert self.process.poll() is None, f"serve exited:\n{self.log()[-3000:]}"
            time.sleep(0.1)
        raise AssertionError(f"no line matching {pattern!r} in:\n{self.log()[-3000:]}")

    def pid_of(self, name: str, after: str = "started") -> int:
        return int(self.wait_for_line(rf"^serve: {name} {after} \(pid (\d+)\)").group(1))

    def call(self) -> tuple[int, str | None]:
        """An API call that reads the database (an unknown key is looked up): 401 when healthy."""
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/api/v1/templates",
            headers={"Authorization": "Api-Key not-a-key"},
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.headers.get(HEADER)
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers.get(HEADER)

    def answers(self, timeout: float = 30) -> tuple[int, str | None]:
        deadline = time.monotonic() + timeout
        while True:
            try:
                answer = self.call()
                if answer[0] == 401 or time.monotonic() > deadline:
                    return answer
            except OSError:
                if time.monotonic() > deadline:
                    raise
            time.sleep(0.2)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_serve_keeps_running_through_a_killed_worker_and_database_and_stops_cleanly(data_dir):
    # given: serve on a free port, on its own embedded PostgreSQL and Redis
    serve = Serve(data_dir, free_port())
    try:
        serve.wait_for_line(r"^serve: Serving on")
        worker1, worker2 = serve.pid_of("worker1"), serve.pid_of("worker2")
        web, beat = serve.pid_of("web"), serve.pid_of("beat")
        status, instance = serve.answers()
        assert status == 401 and re.fullmatch(r"[0-9a-f]{32}", instance)
        assert (data_dir / "gunicorn.ctl").is_socket()  # its own control socket, not ~/.gunicorn
        # what an operator reads: no access log, no Celery banners or tasks (LOG_LEVEL=DEBUG)
        log = serve.log()
        assert "GET /api/v1/templates" not in log and "[tasks]" not in log
        assert "Booting worker" not in log and "superuser privileges" not in log

        # when: a worker is killed
        os.kill(worker1, signal.SIGKILL)
        serve.wait_for_line(r"^serve: worker1 was killed by SIGKILL; restarting it in 1 s$")
        assert serve.call() == (401, instance)  # the web still answers meanwhile
        # then: it comes back, and nothing else was touched
        restarted = serve.pid_of("worker1", after="restarted")
        assert restarted != worker1 and alive(restarted)
        assert all(alive(pid) for pid in (worker2, web, beat))

        # when: the embedded PostgreSQL is killed
        postmaster = embedded.postgres_pid(data_dir)
        os.kill(postmaster, signal.SIGKILL)
        # then: it is restarted and the API reads the database again
        serve.wait_for_line(r"^serve: embedded PostgreSQL is not running \(pid \d+ is gone\)")
        serve.pid_of("embedded PostgreSQL", after="restarted")
        assert serve.answers() == (401, instance)
        assert embedded.postgres_pid(data_dir) not in (None, postmaster)

        # when: SIGTERM
        serve.process.send_signal(signal.SIGTERM)
        # then: everything stops, says so on its last line, and the exit status is 0
        assert serve.process.wait(timeout=60) == 0, serve.log()[-3000:]
        assert serve.log().splitlines()[-1] == "serve: stopped (exit status 0)"
    finally:
        if serve.process.poll() is None:
            serve.process.kill()
    for pid in (restarted, worker2, web, beat):
        assert not alive(pid)
    assert embedded.redis_pid(data_dir) is None
    deadline = time.monotonic() + 10  # the last process to detach stops PostgreSQL
    while embedded.postgres_pid(data_dir) is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert embedded.postgres_pid(data_dir) is None


def test_serve_refuses_a_busy_port_and_leaves_nothing_running(data_dir):
    # given: something already listens on the port
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        # when
        result = subprocess.run(
            [sys.executable, str(settings.BASE_DIR / "manage.py"), "serve", "--port", str(port)],
            env=serve_env(data_dir), capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    # then
    assert result.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in result.stderr
    assert "Serving on" not in result.stdout
    assert embedded.postgres_pid(data_dir) is None  # loading the settings started it: stopped
    assert embedded.redis_pid(data_dir) is None
    assert not (data_dir / "redis.sock").exists()
