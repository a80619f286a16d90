"""`manage.py serve` as an operator runs it: a real process on its own embedded PostgreSQL and
Redis (a data dir of its own), killed children, a killed database and broker, a frozen database,
its metrics and probes, `serve` itself killed and started again, a busy port, SIGTERM."""

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
from collections import Counter
from pathlib import Path

import pytest
from django.conf import settings

from rummy_ledger.dev import embedded
from rummy_ledger.instance import HEADER
from tests.ops.test_metrics import parse, sample

pytestmark = pytest.mark.timeout(120)


METRICS_TOKEN = "serve-test-metrics"
DEADLINE_S = 2  # the web's request deadline and connect timeout in these runs
UNKNOWN_KEY = f"rl_{'0' * 12}_{'x' * 32}"  # well formed: looked up in the database, not found


def serve_env(data_dir: Path) -> dict[str, str]:
    """The embedded defaults under `data_dir`, whatever database and broker the suite uses."""
    ours = ("DATABASE_URL", "CELERY_BROKER_URL", "PROMETHEUS_MULTIPROC_DIR")
    env = {k: v for k, v in os.environ.items() if k not in ours}
    return {
        **env, "RUMMY_DATA_DIR": str(data_dir), "PYTHONUNBUFFERED": "1",
        "METRICS_TOKEN": METRICS_TOKEN, "REQUEST_DEADLINE_SECONDS": str(DEADLINE_S),
        "DB_CONNECT_TIMEOUT": str(DEADLINE_S),
    }  # fmt: skip


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
        self.answered: Counter[int] = Counter()  # statuses of the API calls, for the metrics
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
        status, headers, _ = self.get("/api/v1/templates", f"Api-Key {UNKNOWN_KEY}")
        self.answered[status] += 1
        return status, headers.get(HEADER)

    def get(self, path: str, authorization: str = "") -> tuple[int, dict, bytes]:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", headers={"Authorization": authorization}
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers, exc.read()

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


def database_processes(data_dir: Path) -> list[int]:
    postmaster = embedded.postgres_pid(data_dir)
    children = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True, text=True)
    return [postmaster, *map(int, children.stdout.split())]


def wait_until_gone(*pids: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while any(alive(pid) for pid in pids):
        assert time.monotonic() < deadline, [pid for pid in pids if alive(pid)]
        time.sleep(0.1)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.soak
def test_serve_keeps_running_through_killed_workers_database_broker_and_itself(data_dir):
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

        # then: a load balancer's probes, through gunicorn
        assert serve.get("/healthz")[0] == 200
        status, _, body = serve.get("/readyz")
        assert status == 200, body

        # when: the embedded Redis is killed
        broker = embedded.redis_pid(data_dir)
        killed = time.monotonic()
        os.kill(broker, signal.SIGKILL)
        # then: it answers again about a second later (the supervisor's first restart delay;
        # before, redis-py's retries on the stale socket made it 4.4 s and more)
        while not embedded._redis_answers(embedded.redis_socket(data_dir)):
            assert time.monotonic() - killed < 10, serve.log()[-3000:]
            time.sleep(0.05)
        assert time.monotonic() - killed < 3, f"broker back after {time.monotonic() - killed} s"
        serve.wait_for_line(r"^serve: embedded Redis restarted")

        # when: the database freezes (every PostgreSQL process stopped: no timeout of its own)
        frozen = database_processes(data_dir)
        for pid in frozen:
            os.kill(pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            status, _ = serve.call()
            elapsed = time.monotonic() - started
        finally:
            for pid in frozen:
                os.kill(pid, signal.SIGCONT)
        # then: the web gave up at its deadline (or its connect timeout): 503, not a hang
        assert status == 503 and elapsed < DEADLINE_S + 1.5, (status, elapsed)
        assert serve.answers() == (401, instance)

        # then: the metrics of every web worker summed (multiprocess mode), by route: what
        # these calls caused (a call of the start-up, timed out by the client, may be counted)
        def templates_401() -> float:
            status, _, body = serve.get("/metrics", f"Bearer {METRICS_TOKEN}")
            assert status == 200
            metrics = parse(body.decode())
            assert sample(metrics, "rummy_metrics_reading_up", reading="celery") == 1
            latency = "rummy_http_request_duration_seconds_count"
            return sample(metrics, latency, route="templates", method="GET", status="401")

        before = templates_401()
        assert [serve.call()[0] for _ in range(4)] == [401] * 4
        assert templates_401() - before == 4

        # when: serve itself is killed
        serve.process.kill()
        serve.process.wait()
        # then: its children go with it, the embedded Redis stays (it is a daemon)
        wait_until_gone(restarted, worker2, web, beat)
        broker = embedded.redis_pid(data_dir)
        assert broker is not None

        # when: the next serve starts on the same data, and is stopped by SIGTERM
        serve = Serve(data_dir, free_port())
        serve.wait_for_line(rf"^serve: embedded Redis started \(pid {broker}\)")  # adopted
        web = serve.pid_of("web")
        serve.process.send_signal(signal.SIGTERM)
        # then: everything stops, says so on its last line, and the exit status is 0
        assert serve.process.wait(timeout=60) == 0, serve.log()[-3000:]
        assert serve.log().splitlines()[-1] == "serve: stopped (exit status 0)"
    finally:
        if serve.process.poll() is None:
            serve.process.kill()
    assert not alive(web)
    assert embedded.redis_pid(data_dir) is None  # the Redis it adopted too
    deadline = time.monotonic() + 10  # the last process to detach stops PostgreSQL
    while embedded.postgres_pid(data_dir) is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert embedded.postgres_pid(data_dir) is None
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
    assert embedded.postgres_pid(data_dir) is None  # manage.py started it: stopped
    assert embedded.redis_pid(data_dir) is None
    assert not (data_dir / "redis.sock").exists()
