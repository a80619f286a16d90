"""A local high-availability cluster: two PostgreSQL 15 servers (a primary and its synchronous
standby) managed by Patroni with etcd, HAProxy on Patroni's `GET /primary`, and PgBouncer in
transaction mode on HAProxy. `make ha` starts it, `make ha-switchover` and `make ha-failover` move
the primary, `make ha-stop` ends it all (docs/operations.md, "A synchronous standby").

Debian's packages (`make ha-packages`, as root): postgresql-15, patroni 3.0.2, etcd-server 3.4,
haproxy 2.6, pgbouncer 1.18. Patroni 3.0.2 talks to etcd through the v2 API (`etcd:` section, etcd
started with `--enable-v2`): its `etcd3:` client overwrites the leader key when a frozen leader
wakes (a split brain, fixed upstream in 3.0.3; the v2 client compares-and-swaps it).
Patroni and PostgreSQL refuse root: they run as `postgres`, each node in a session of its own.

The settings that matter (Patroni's DCS section):
- `synchronous_mode: true`: a commit returns once the standby has it (`synchronous_commit: on`,
  `synchronous_standby_names` kept by Patroni), and only the synchronous standby may be promoted,
  so losing the primary loses no acknowledged write.
- `synchronous_mode_strict: false`: when the standby is gone the primary goes on alone (writes
  keep being taken) until it is back. The other choice (strict) refuses every commit while one
  server is down; with two servers that turns the loss of either into an outage. What is lost
  this way needs two faults in a row: the standby down, then the primary lost before the standby
  caught up (HA_STRICT=1 makes it strict).
- `ttl: 20`, `loop_wait: 5`, `retry_timeout: 5`: a leader that stops renewing its key is replaced
  within ttl + loop_wait (about 16-25 s, under the 30 s asked).
- `use_pg_rewind: true` (with `wal_log_hints`): the old primary rejoins as a standby by rewinding
  its data directory instead of a new copy.

Run: `python3 ha/cluster.py start|status|switchover|failover [--mode kill|freeze]|stop`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

HA_DIR = Path(os.environ.get("HA_DIR", "/tmp/rummy-ha"))
PGBOUNCER_DIR = HA_DIR / "pgbouncer"
BIN_DIR = "/usr/lib/postgresql/15/bin"
SCOPE = "rummy"
DATABASE = "rummy_ledger"
# The role the web processes connect as: its session carries the request bounds (a pool in
# transaction mode shares sessions, so no `SET` of a client may stay behind on one).
WEB_ROLE = "rummy_web"
APP_ROLE = "rummy_app"  # workers, beat, migrate: no per-request bounds
ETCD_CLIENT, ETCD_PEER = 23790, 23800
HAPROXY_PORT = 15440  # the primary, whichever node it is
PGBOUNCER_PORT = 16432
FREEZE_SECONDS = 45
PROMOTION_TIMEOUT = 90
STRICT = os.environ.get("HA_STRICT", "") == "1"
ROOT = Path(__file__).resolve().parent.parent
SERVICE_PORT = int(os.environ.get("HA_SERVICE_PORT", "8000"))


@dataclass(frozen=True)
class Node:
    name: str
    pg_port: int
    rest_port: int

    @property
    def directory(self) -> Path:
        return HA_DIR / self.name

    @property
    def data_dir(self) -> Path:
        return self.directory / "data"

    @property
    def rest(self) -> str:
        return f"http://127.0.0.1:{self.rest_port}"


NODES = (Node("node1", 15432, 18008), Node("node2", 15433, 18009))


def node_named(name: str) -> Node:
    return next(node for node in NODES if node.name == name)


def multi_host_url(user: str = APP_ROLE) -> str:
    """Both servers; libpq and psycopg take the first that accepts writes."""
    hosts = ",".join("127.0.0.1" for _ in NODES)
    ports = ",".join(str(node.pg_port) for node in NODES)
    return f"postgres://{user}@{hosts}/{DATABASE}?port={ports}&target_session_attrs=read-write"


def pgbouncer_url(user: str) -> str:
    return f"postgres://{user}@127.0.0.1:{PGBOUNCER_PORT}/{DATABASE}"


def service_environ() -> dict[str, str]:
    """A node of the service on this cluster: web and workers through PgBouncer, each as its
    role; beat's and migrate's locks on a session of their own, straight to the primary."""
    return {
        "DATABASE_URL": pgbouncer_url(APP_ROLE),
        "WEB_DATABASE_URL": pgbouncer_url(WEB_ROLE),
        "DIRECT_DATABASE_URL": multi_host_url(),
        "DATABASE_POOLING": "transaction",
    }


def request_bounds() -> tuple[str, str]:
    """The web role's lock and statement bounds: the service's REQUEST_* settings' defaults."""
    lock_ms = os.environ.get("REQUEST_LOCK_TIMEOUT_MS", "2000")
    statement_ms = os.environ.get("REQUEST_STATEMENT_TIMEOUT_MS", "5000")
    return f"{lock_ms}ms", f"{statement_ms}ms"


# --- configuration files ----------------------------------------------------------------------


def patroni_config(node: Node) -> str:
    """Patroni's YAML (written as JSON, which YAML reads)."""
    hba = ["local all all trust", "host all all 127.0.0.1/32 trust",
           "host replication all 127.0.0.1/32 trust"]  # fmt: skip
    config = {
        "scope": SCOPE,
        "name": node.name,
        "restapi": {"listen": f"127.0.0.1:{node.rest_port}",
                    "connect_address": f"127.0.0.1:{node.rest_port}"},
        "etcd": {"host": f"127.0.0.1:{ETCD_CLIENT}"},
        "bootstrap": {
            "dcs": {
                "ttl": 20, "loop_wait": 5, "retry_timeout": 5,
                "maximum_lag_on_failover": 1048576,
                "synchronous_mode": True, "synchronous_mode_strict": STRICT,
                "postgresql": {
                    "use_pg_rewind": True, "use_slots": True,
                    "parameters": {
                        "synchronous_commit": "on", "wal_log_hints": "on",
                        "max_connections": 200, "max_wal_size": "256MB",
                        "min_wal_size": "64MB", "wal_keep_size": "128MB",
                        "timezone": "UTC",  # Django then sends no SET TIME ZONE per session
                        "idle_session_timeout": 0,
                    },
                },
            },
            "initdb": [{"encoding": "UTF8"}, {"locale": "C"}, "data-checksums"],
            "pg_hba": hba,
        },
        "postgresql": {
            "listen": f"127.0.0.1:{node.pg_port}",
            "connect_address": f"127.0.0.1:{node.pg_port}",
            "data_dir": str(node.data_dir),
            "bin_dir": BIN_DIR,
            "pgpass": str(node.directory / "pgpass"),
            "authentication": {
                "superuser": {"username": "postgres", "password": "postgres"},
                "replication": {"username": "replicator", "password": "replicator"},
                "rewind": {"username": "rewinder", "password": "rewinder"},
            },
            "parameters": {"unix_socket_directories": str(node.directory)},
            "pg_hba": hba,
            # a new standby's copy starts at once, not at the next spread checkpoint
            "basebackup": [{"checkpoint": "fast"}],
        },
        "tags": {"nofailover": False, "noloadbalance": False, "clonefrom": False},
    }  # fmt: skip
    return json.dumps(config, indent=2)


def haproxy_config() -> str:
    servers = "\n".join(
        f"  server {n.name} 127.0.0.1:{n.pg_port} check port {n.rest_port}" for n in NODES
    )
    return f"""global
  maxconn 1000
  pidfile {HA_DIR / "haproxy.pid"}
defaults
  mode tcp
  timeout connect 2s
  timeout client 30m
  timeout server 30m
  timeout check 2s
listen primary
  bind 127.0.0.1:{HAPROXY_PORT}
  option httpchk GET /primary
  http-check expect status 200
  default-server inter 1s fall 2 rise 1 on-marked-down shutdown-sessions
{servers}
"""


def pgbouncer_config() -> str:
    return f"""[databases]
{DATABASE} = host=127.0.0.1 port={HAPROXY_PORT} dbname={DATABASE}
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {PGBOUNCER_PORT}
unix_socket_dir =
auth_type = trust
auth_file = {PGBOUNCER_DIR / "users.txt"}
pool_mode = transaction
max_client_conn = 1000
default_pool_size = 20
server_connect_timeout = 2
server_login_retry = 1
query_wait_timeout = 5
server_check_delay = 0
logfile = {PGBOUNCER_DIR / "pgbouncer.log"}
pidfile = {PGBOUNCER_DIR / "pgbouncer.pid"}
admin_users = postgres
"""


# --- processes --------------------------------------------------------------------------------


def as_postgres(command: list[str], log: Path) -> subprocess.Popen:
    """A process of the `postgres` user in a session of its own (runuser stays its parent)."""
    return subprocess.Popen(
        ["runuser", "-u", "postgres", "--", *command],
        stdout=log.open("a"), stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip


def state() -> dict:
    path = HA_DIR / "state.json"
    return json.loads(path.read_text()) if path.exists() else {}


def save_state(**changes) -> None:
    (HA_DIR / "state.json").write_text(json.dumps(state() | changes))


def alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def rest(node: Node, path: str, timeout: float = 2) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(node.rest + path, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as exc:
        body = exc.read()
        try:
            return exc.code, json.loads(body or b"{}")
        except ValueError:
            return exc.code, {}
    except (OSError, ValueError):
        return 0, {}


def members() -> dict[str, str]:
    """Each member's role as Patroni's `/cluster` tells it (leader, sync_standby, replica)."""
    for node in NODES:
        status, body = rest(node, "/cluster")
        if status == 200:
            return {m["name"]: m["role"] for m in body.get("members", [])}
    return {}


def leader() -> Node | None:
    for node in NODES:
        if rest(node, "/primary")[0] == 200:
            return node
    return None


def wait(predicate, timeout: float, what: str, interval: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise SystemExit(f"ha: {what} did not happen within {timeout:.0f} s; logs under {HA_DIR}")


def synced(expected_leader: Node | None = None) -> bool:
    """A leader and a synchronous standby streaming from it."""
    roles = members()
    leaders = [n for n, r in roles.items() if r == "leader"]
    if len(leaders) != 1 or "sync_standby" not in roles.values():
        return False
    return expected_leader is None or leaders[0] == expected_leader.name


def psql(node: Node, sql: str, database: str = "postgres") -> str:
    return subprocess.run(
        ["runuser", "-u", "postgres", "--", f"{BIN_DIR}/psql", "-h", "127.0.0.1", "-p",
         str(node.pg_port), "-U", "postgres", "-d", database, "-Atqc", sql],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip


def start_node(node: Node) -> None:
    node.directory.mkdir(parents=True, exist_ok=True)
    config = node.directory / "patroni.yml"
    config.write_text(patroni_config(node))
    shutil.chown(node.directory, "postgres", "postgres")
    node.directory.chmod(0o700)
    process = as_postgres(["patroni", str(config)], node.directory / "patroni.log")
    save_state(**{node.name: process.pid})


def node_processes(node: Node) -> list[int]:
    """Every process of a node: its Patroni (and the runuser above it) and its PostgreSQL (the
    postmaster is Patroni's grandchild, reparented to init; its backends are its children)."""
    pids = []
    runuser = state().get(node.name)
    if alive(runuser):
        pids += process_tree(runuser)
    postmaster = postmaster_pid(node)
    if alive(postmaster) and postmaster not in pids:
        pids += process_tree(postmaster)
    return pids


def postmaster_pid(node: Node) -> int | None:
    try:
        return int((node.data_dir / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def process_tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    ps = subprocess.run(["ps", "-e", "-o", "pid=,ppid="], capture_output=True, text=True)
    for line in ps.stdout.splitlines():
        pid, ppid = map(int, line.split())
        children.setdefault(ppid, []).append(pid)
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo += children.get(pid, [])
    return tree


def signal_all(pids: list[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)


# --- commands ---------------------------------------------------------------------------------


def start() -> dict:
    if state():
        raise SystemExit(f"ha: a cluster runs already under {HA_DIR} (python3 ha/cluster.py stop)")
    HA_DIR.mkdir(parents=True, exist_ok=True)
    HA_DIR.chmod(0o755)
    started = time.monotonic()
    etcd = subprocess.Popen(
        ["etcd", "--name", "ha", "--data-dir", str(HA_DIR / "etcd"), "--enable-v2",
         "--listen-client-urls", f"http://127.0.0.1:{ETCD_CLIENT}",
         "--advertise-client-urls", f"http://127.0.0.1:{ETCD_CLIENT}",
         "--listen-peer-urls", f"http://127.0.0.1:{ETCD_PEER}",
         "--initial-advertise-peer-urls", f"http://127.0.0.1:{ETCD_PEER}",
         "--initial-cluster", f"ha=http://127.0.0.1:{ETCD_PEER}"],
        stdout=(HA_DIR / "etcd.log").open("a"), stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    save_state(etcd=etcd.pid)
    wait(lambda: etcd_healthy(), 30, "etcd answering")
    first, second = NODES
    start_node(first)
    wait(lambda: leader() == first, 60, f"{first.name} leading")
    roles_and_database(first)
    start_node(second)
    wait(synced, 90, "a synchronous standby")
    (HA_DIR / "haproxy.cfg").write_text(haproxy_config())
    subprocess.run(["haproxy", "-D", "-f", str(HA_DIR / "haproxy.cfg")], check=True)
    save_state(haproxy=int((HA_DIR / "haproxy.pid").read_text()))
    PGBOUNCER_DIR.mkdir()
    users = "".join(f'"{user}" ""\n' for user in ("postgres", WEB_ROLE, APP_ROLE))
    (PGBOUNCER_DIR / "users.txt").write_text(users)
    (PGBOUNCER_DIR / "pgbouncer.ini").write_text(pgbouncer_config())
    shutil.chown(PGBOUNCER_DIR, "postgres", "postgres")  # it refuses root, and writes its pid
    subprocess.run(
        ["runuser", "-u", "postgres", "--", "pgbouncer", "-d",
         str(PGBOUNCER_DIR / "pgbouncer.ini")],
        check=True,
    )  # fmt: skip
    wait(lambda: (PGBOUNCER_DIR / "pgbouncer.pid").exists(), 10, "PgBouncer started")
    save_state(pgbouncer=int((PGBOUNCER_DIR / "pgbouncer.pid").read_text()))
    return {"started_s": round(time.monotonic() - started, 1)}


def etcd_healthy() -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ETCD_CLIENT}/health", timeout=1) as r:
            return r.status == 200
    except OSError:
        return False


def roles_and_database(node: Node) -> None:
    """The service's database and roles: the web role carries the request bounds as role
    settings (PgBouncer's transaction mode forbids session `SET`s), the app role none."""
    lock, statement = request_bounds()
    for role in (WEB_ROLE, APP_ROLE):
        psql(node, f"CREATE ROLE {role} LOGIN SUPERUSER")
    psql(node, f"ALTER ROLE {WEB_ROLE} SET lock_timeout = '{lock}'")
    psql(node, f"ALTER ROLE {WEB_ROLE} SET statement_timeout = '{statement}'")
    psql(node, f"CREATE DATABASE {DATABASE} OWNER {APP_ROLE}")


def start_service(python: str) -> None:
    """One node of the service (`manage.py serve`: web, beat, two workers, the demo's tables)
    on the cluster, its broker the embedded Redis of a data dir under HA_DIR."""
    service_dir = HA_DIR / "service"
    service_dir.mkdir(exist_ok=True)
    env = {**os.environ, **service_environ(), "RUMMY_EMBEDDED": "1",
           "RUMMY_DATA_DIR": str(service_dir)}  # fmt: skip
    env.pop("CELERY_BROKER_URL", None)
    log = service_dir / "serve.log"
    process = subprocess.Popen(
        [python, str(ROOT / "manage.py"), "serve", "--port", str(SERVICE_PORT)],
        env=env, stdout=log.open("a"), stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    save_state(service=process.pid)
    wait(lambda: "serve: Serving on" in log.read_text() or process.poll() is not None, 300,
         "the service node serving")  # fmt: skip
    if process.poll() is not None:
        raise SystemExit(f"ha: the service node exited:\n{log.read_text()[-3000:]}")


def stop() -> None:
    """Everything the cluster started, by the pids it noted, and its directory."""
    known = state()
    if not known:
        print(f"ha: nothing runs under {HA_DIR}")
        return
    if alive(known.get("service")):  # serve stops its own children
        os.kill(known["service"], signal.SIGTERM)
        wait(lambda: not alive(known["service"]) or zombie(known["service"]), 60,
             "the service node stopping")  # fmt: skip
    for node in NODES:  # SIGCONT first: a frozen node would not hear the rest
        pids = node_processes(node)
        signal_all(pids, signal.SIGCONT)
        signal_all([p for p in pids if p == known.get(node.name)], signal.SIGTERM)
    for name in ("pgbouncer", "haproxy"):
        signal_all([known[name]] if alive(known.get(name)) else [], signal.SIGTERM)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(alive(known.get(n.name)) for n in NODES):
        time.sleep(0.2)
    for node in NODES:
        signal_all(node_processes(node), signal.SIGKILL)
    if alive(known.get("etcd")):
        os.kill(known["etcd"], signal.SIGTERM)
        time.sleep(1)
    shutil.rmtree(HA_DIR, ignore_errors=True)
    print(f"ha: stopped; {HA_DIR} removed")


def switchover() -> dict:
    """Patroni's planned switch: the standby is promoted, the old primary follows it."""
    old = wait(leader, 30, "a leader")
    wait(synced, 60, "a synchronous standby")
    candidate = next(n for n in NODES if n != old)
    started = time.monotonic()
    body = json.dumps({"leader": old.name, "candidate": candidate.name}).encode()
    request = urllib.request.Request(old.rest + "/switchover", body, method="POST")
    with urllib.request.urlopen(request, timeout=60) as response:
        response.read()
    wait(lambda: leader() == candidate, 60, f"{candidate.name} leading")
    promoted = time.monotonic() - started
    wait(lambda: synced(candidate), 90, f"{old.name} following {candidate.name}")
    return {"old_primary": old.name, "new_primary": candidate.name,
            "promotion_s": round(promoted, 1),
            "rejoined_s": round(time.monotonic() - started, 1)}  # fmt: skip


def fault(node: Node, mode: str) -> int:
    """kill -9 or SIGSTOP every process of a node at once (all stopped first, so none sees
    another die). Returns how many."""
    pids = node_processes(node)
    signal_all(pids, signal.SIGSTOP)
    if mode == "kill":
        signal_all(pids, signal.SIGKILL)
    return len(pids)


def failover(mode: str, freeze_seconds: float = FREEZE_SECONDS, on_promoted=None) -> dict:
    """Lose the primary's node (kill -9, or SIGSTOP for `freeze_seconds` then SIGCONT); the
    standby is promoted; the old node comes back (restarted after a kill, woken after a freeze)
    and rejoins as the synchronous standby (pg_rewind)."""
    old = wait(leader, 30, "a leader")
    wait(synced, 90, "a synchronous standby")
    survivor = next(n for n in NODES if n != old)
    frozen = node_processes(old)
    started = time.monotonic()
    count = fault(old, mode)
    wait(lambda: rest(survivor, "/primary")[0] == 200, PROMOTION_TIMEOUT,
         f"{survivor.name} promoted")  # fmt: skip
    promoted = time.monotonic() - started
    if on_promoted is not None:
        on_promoted()
    if mode == "freeze":
        time.sleep(max(0.0, freeze_seconds - (time.monotonic() - started)))
        signal_all(frozen, signal.SIGCONT)
    else:
        start_node(old)  # the machine is back: its Patroni starts on the old data directory
    back = time.monotonic()
    wait(lambda: synced(survivor), 180, f"{old.name} rejoining as the synchronous standby")
    return {"mode": mode, "old_primary": old.name, "new_primary": survivor.name,
            "processes": count, "promotion_s": round(promoted, 1),
            "rejoin_s": round(time.monotonic() - back, 1)}  # fmt: skip


def zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


def describe() -> str:
    roles = members()
    lines = [f"ha: cluster {SCOPE!r} under {HA_DIR} (logs there)",
             f"  etcd (v2 API)          127.0.0.1:{ETCD_CLIENT}"]  # fmt: skip
    for node in NODES:
        lines.append(
            f"  {node.name}: PostgreSQL 15 127.0.0.1:{node.pg_port}, Patroni REST {node.rest}"
            f"  [{roles.get(node.name, 'down')}]"
        )
    lines += [
        f"  HAProxy -> primary     127.0.0.1:{HAPROXY_PORT} (checks Patroni GET /primary)",
        f"  PgBouncer (transaction) 127.0.0.1:{PGBOUNCER_PORT} -> HAProxy",
        f"  web:     DATABASE_URL={pgbouncer_url(WEB_ROLE)}",
        f"  workers: DATABASE_URL={pgbouncer_url(APP_ROLE)}",
        f"  direct:  DIRECT_DATABASE_URL={multi_host_url()}",
    ]
    if alive(state().get("service")):
        lines.append(f"  service node (serve)  http://127.0.0.1:{SERVICE_PORT}/ "
                     f"(log {HA_DIR / 'service' / 'serve.log'})")  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("start", "status", "switchover", "failover", "stop"))
    parser.add_argument("--mode", choices=("kill", "freeze"), default="kill")
    parser.add_argument("--freeze-seconds", type=float, default=FREEZE_SECONDS)
    parser.add_argument("--node", metavar="PYTHON", help="start: also one node of the service, "
                        "run by this Python (the checkout's .venv/bin/python)")  # fmt: skip
    args = parser.parse_args()
    if args.command == "stop":
        stop()
        return
    if args.command == "start":
        print(json.dumps(start()))
        if args.node:
            start_service(args.node)
    elif args.command == "switchover":
        print(json.dumps(switchover()))
    elif args.command == "failover":
        print(json.dumps(failover(args.mode, args.freeze_seconds)))
    print(describe())


if __name__ == "__main__":
    sys.exit(main())
