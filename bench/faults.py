"""Load and faults: many concurrent game-server tables over HTTP against `manage.py serve`
(gunicorn with WEB_CONCURRENCY workers, two Celery workers, beat), with faults injected while
they play. `make chaos` runs it.

1. Throughput, no fault, `--clients` clients, each phase `--phase-seconds`: an authenticated
   `GET /templates` (the baseline), then tables that open a 4-player points game and post its
   deal (the game server's two writes). Printed: each rate, the ratios to the GET (goal 0.5),
   p50/p99 ingest latency (goal p99 < 100 ms) and the settlement lag (goal p99 < 2 s).
2. Faults, the same tables playing throughout: kill -9 a Celery worker (`serve` restarts it),
   kill -9 a gunicorn worker (its master replaces it), the broker down for 20 s, PostgreSQL
   restarted. For each, the time from the fault's start to full recovery: until the API answers
   and every deal acknowledged by the end of the fault is settled (the broker's includes its
   20 s down).
3. Checks: every acknowledged deal is stored once and settled once (one settlement transfer per
   game), no game of the run is left open, `manage.py reconcile` exits 0, and no client got an
   answer other than success or a retryable 409/503 with Retry-After (it retries those, with the
   same Idempotency-Key, as a game server must; a cut connection is retried the same way).

Services: the embedded PostgreSQL and Redis of a data dir of its own under /tmp by default (the
broker is frozen with SIGSTOP for 20 s, since `serve` would restart a stopped one at once; the
PostgreSQL is stopped and `serve` restarts it). With DATABASE_URL and CELERY_BROKER_URL set, the
machine's own servers: RabbitMQ is stopped with `rabbitmqctl stop_app` / `start_app`, Redis with
`redis-cli shutdown` and started again as the machine starts it, PostgreSQL 15 restarted with
`pg_ctlcluster`. Everything it stops it starts again. The last line is one JSON object.

Two nodes (`--nodes 2`, on the machine's servers only): two `serve` instances, each with its own
port, directory (control socket, beat schedule) and worker names, started one after the other on
one database and broker; the clients spread over both and move to the other node when theirs
refuses or cuts a connection, as behind a load balancer. The same throughput phase, then the
faults phase has one fault: the node whose beat holds the schedule lock (rummy_ledger.beat) is
killed -9 whole (serve and every process under it, at once). Recorded: full recovery, the
seconds until the other node's beat schedules, and the same checks.

Failover (`--failover kill|freeze`, as root with Debian's packages: `make ha-packages`): the
database is the local Patroni cluster of ha/cluster.py (a primary and its synchronous standby,
HAProxy, PgBouncer in transaction mode), started for the run and stopped after it; the node(s)
reach it as ha/cluster.py's service_environ() says, the broker is the machine's RabbitMQ (or
CELERY_BROKER_URL). Each table also credits a deposit per game, requests a withdrawal of ₹1 from
its previous game's winner (payments scope; a winner not settled yet is refused, not counted) and
registers one more of its players in a tournament (games scope). The faults: the
primary's node lost (every process of it killed -9, or frozen with SIGSTOP for 45 s and let go);
the standby is promoted, the old node rejoins as the synchronous standby (pg_rewind), then the
same again the other way. Recorded: acknowledged writes (games with their deal, deposits,
withdrawals, registrations) against
what is stored (lost, doubled), games stuck, reconcile on the new primary, each promotion's and
rejoin's seconds, and how long writes were refused (`unavailable_s`: first to last refused write
of each failover). The last line's JSON leads with those.

Run: `.venv/bin/python bench/faults.py [--clients 8] [--phase-seconds 20] [--no-faults]
[--nodes 2] [--failover kill|freeze]`
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LOG_LEVEL", "WARNING")
# `--failover MODE`, read before the settings: the cluster's addresses are their environment
FAILOVER = next((v for a, v in zip(sys.argv, sys.argv[1:], strict=False) if a == "--failover"), "")
if FAILOVER:  # the database is the HA cluster, up before the settings are read
    from ha import cluster as ha_cluster

    if not ha_cluster.state():
        print(f"ha cluster: {json.dumps(ha_cluster.start())}", flush=True)
    os.environ |= ha_cluster.service_environ()
    os.environ.setdefault("CELERY_BROKER_URL", "amqp://guest:guest@127.0.0.1:5672//")
    os.environ.setdefault("DJANGO_SECRET_KEY", secrets.token_urlsafe(50))
    os.environ["RUMMY_EMBEDDED"] = "1"  # `serve` (a development command) runs the node
SYSTEM = bool(os.environ.get("DATABASE_URL"))
if not SYSTEM:
    os.environ["RUMMY_EMBEDDED"] = "1"
    os.environ["RUMMY_DATA_DIR"] = tempfile.mkdtemp(prefix="rl-chaos-", dir="/tmp")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rummy_ledger.settings")

from bench.startup import django_start  # noqa: E402
from ha.cluster import process_tree  # noqa: E402

django_start()

from datetime import timedelta  # noqa: E402
from decimal import Decimal  # noqa: E402

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.models import Count, F, Q  # noqa: E402
from django.utils import timezone  # noqa: E402
from djmoney.money import Money  # noqa: E402

from rummy_ledger.api.keys import api_client_create  # noqa: E402
from rummy_ledger.api.models import ApiClient  # noqa: E402
from rummy_ledger.dev import embedded  # noqa: E402
from rummy_ledger.dev.demo.simulator import Simulator  # noqa: E402
from tournaments.models import Deal, Game, GameTemplate, Registration  # noqa: E402
from tournaments.references import tournament_key  # noqa: E402
from tournaments.tournaments.services.setup import (  # noqa: E402
    tournament_create,
    tournament_fields_checked,
)
from wallets import references as wallet_references  # noqa: E402
from wallets.models import Account, Transfer, Withdrawal  # noqa: E402
from wallets.services.deposits import deposit_register  # noqa: E402
from wallets.services.kyc import kyc_report  # noqa: E402

TEMPLATE = "chaos-points-4"
SEATS = 4
PLAYERS = 2000  # tables rarely share a player, as on a real platform
BROKER_DOWN_SECONDS = 20
RETRYABLE = {409, 503}


# --- the service ----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Stack:
    """`manage.py serve --no-demo` on a port of its own; its log names every child's pid. A node
    of several (`data_dir`) has a directory of its own: control socket, beat schedule, statics."""

    def __init__(self, web_workers: int, data_dir: Path | None = None, port: int | None = None):
        self.port = port or free_port()
        self.web_workers, self.data_dir = web_workers, data_dir
        self.log_path = Path(tempfile.mkstemp(prefix="rl-chaos-serve-", suffix=".log")[1])
        env = {**os.environ, "WEB_CONCURRENCY": str(web_workers), "PYTHONUNBUFFERED": "1"}
        if not SYSTEM:  # serve attaches to the embedded servers itself, and so supervises them
            env.pop("DATABASE_URL", None)
            env.pop("CELERY_BROKER_URL", None)
        if data_dir is not None:
            env["RUMMY_DATA_DIR"] = str(data_dir)
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "manage.py"), "serve", "--no-demo", "--workers", "2",
             "--port", str(self.port)],
            env=env, stdout=self.log_path.open("w"), stderr=subprocess.STDOUT,
        )  # fmt: skip
        self.wait_for(r"^serve: Serving on", 180)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.log_path.read_text()

    def wait_for(self, pattern: str, timeout: float, after: int = 0) -> re.Match:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = re.compile(pattern, re.M).search(self.log(), after)
            if match:
                return match
            if self.process.poll() is not None:
                raise SystemExit(f"serve exited:\n{self.log()[-3000:]}")
            time.sleep(0.1)
        raise SystemExit(f"no {pattern!r} in the serve log:\n{self.log()[-3000:]}")

    def pid_of(self, name: str) -> int:
        pids = re.findall(rf"^serve: {name} (?:started|restarted) \(pid (\d+)\)", self.log(), re.M)
        return int(pids[-1])

    def kill_node(self) -> int:
        """kill -9 the whole node at once: `serve` and every process under it (its children
        run in sessions of their own, so one process group would not reach them). All are
        stopped first, so none sees another die (serve's children get SIGTERM when it dies)."""
        tree = process_tree(self.process.pid)
        for pid in tree:
            os.kill(pid, signal.SIGSTOP)
        for pid in tree:
            os.kill(pid, signal.SIGKILL)
        self.process.wait()
        return len(tree)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()


def payments_key() -> str:
    _, key = api_client_create(name=f"chaos-pay-{uuid.uuid4().hex[:8]}", scopes=["payments"])
    connection.close()
    return key


def seed() -> tuple[str, list[str]]:
    players = [f"chaos-{n}" for n in range(PLAYERS)]
    for n, p in enumerate(players):
        if not Account.objects.filter(code=f"player:{p}:deposit").exists():
            deposit_register(
                player_external_id=p, amount=Money("5000000.00", "INR"), reference=f"seed-{p}"
            )
            if FAILOVER:  # a verified PAN: real money withdraws winnings only, with one
                pan = f"CHAOS{n:04d}{'ABCDEFGHIJKLMNOPQRSTUVWXYZ'[n % 26]}"
                kyc_report(player_external_id=p, pan=pan, status="verified", reference=f"kyc-{p}")
    GameTemplate.objects.get_or_create(
        slug=TEMPLATE,
        defaults={"format": "points", "seats": SEATS, "point_value": Decimal("0.10"),
                  "fee_percent": Decimal("15")},
    )  # fmt: skip
    client, key = api_client_create(name=f"chaos-{uuid.uuid4().hex[:8]}", scopes=["games"])
    if FAILOVER:
        tournament_create(
            spec=tournament_fields_checked(tournament_spec(client)), created_by="faults"
        )
    connection.close()
    return key, players


def tournament_spec(client: ApiClient) -> dict:
    """The run's tournament: a seat for every player, registration open for a day."""
    closes = timezone.now() + timedelta(days=1)
    return {
        "slug": f"chaos-{client.pk}", "name": "Chaos", "client": client.name, "currency": "INR",
        "entry_fee": "10.00", "fee_percent": "10.00", "min_players": 2, "max_players": PLAYERS,
        "table_size": 6, "registration_closes_at": closes.isoformat(),
        "rounds": [{"qualify_top": 1}, {"final": True}],
        "prizes": [{"ranks": "1", "percent": "100.00"}],
    }  # fmt: skip


# --- the tables -------------------------------------------------------------------------------


@dataclass
class Tally:
    answers: Counter = field(default_factory=Counter)  # (operation, status)
    bad: list = field(default_factory=list)  # answers that are neither success nor retryable
    latency: dict = field(
        default_factory=lambda: {
            "open": [], "deal": [], "get": [], "deposit": [], "withdrawal": [], "registration": []
        }
    )  # fmt: skip
    acked: list = field(default_factory=list)  # (game_id, time acknowledged)
    deposits: list = field(default_factory=list)  # references of acknowledged deposits
    withdrawals: list = field(default_factory=list)  # references of acknowledged withdrawals
    registrations: list = field(default_factory=list)  # players whose registration was acked
    refused: list = field(default_factory=list)  # when a write was refused (503, cut, 409)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, operation: str, status: int | str, seconds: float | None = None) -> None:
        with self.lock:
            self.answers[(operation, status)] += 1
            if seconds is not None:
                self.latency[operation].append(seconds)


class Client:
    """One game server's HTTP calls: a retryable answer (409/503 with Retry-After, a cut
    connection) is retried with the same Idempotency-Key until it succeeds. With several nodes
    (`base` a list, as behind a load balancer) a refused or cut connection moves to the next."""

    def __init__(self, base: str | list[str], key: str, tally: Tally):
        self.bases = [b + "/api/v1/" for b in ([base] if isinstance(base, str) else base)]
        self.key, self.tally = key, tally

    @property
    def base(self) -> str:
        return self.bases[0]

    def call(
        self, operation: str, method: str, path: str, body: dict | None = None, refusal: str = ""
    ) -> dict:
        """The answer's body; `refusal`: an error code the run expects now and then (raised as
        `Refused`, not counted as a bad answer)."""
        headers = {"Authorization": f"Api-Key {self.key}", "Content-Type": "application/json"}
        if method == "POST":
            headers["Idempotency-Key"] = uuid.uuid4().hex
        data = None if body is None else json.dumps(body).encode()
        deadline = time.monotonic() + 300
        while True:
            started = time.perf_counter()
            request = urllib.request.Request(self.base + path, data, headers, method=method)
            try:
                with urllib.request.urlopen(request, timeout=60) as response:
                    payload = json.loads(response.read() or b"{}")
                self.tally.add(operation, response.status, time.perf_counter() - started)
                return payload
            except urllib.error.HTTPError as exc:
                error = json.loads(exc.read() or b"{}").get("error", {})
                self.tally.add(operation, exc.code)
                if refusal and error.get("code") == refusal:
                    raise Refused(refusal) from exc
                if method == "POST":
                    with self.tally.lock:
                        self.tally.refused.append(time.monotonic())
                retry_after = exc.headers.get("Retry-After")
                if exc.code not in RETRYABLE or retry_after is None:
                    with self.tally.lock:
                        self.tally.bad.append((operation, exc.code, path))
                    raise
                pause = min(float(retry_after), 2.0) * random.uniform(0.25, 1.0)
            except (OSError, urllib.error.URLError) as exc:  # a killed web worker, a reset
                self.tally.add(operation, type(exc).__name__)
                if method == "POST":
                    with self.tally.lock:
                        self.tally.refused.append(time.monotonic())
                self.bases.append(self.bases.pop(0))  # the next node, if there are several
                pause = 0.2
            if time.monotonic() > deadline:
                raise SystemExit(f"{operation} {path} did not succeed within 300 s")
            time.sleep(pause)


class Refused(Exception):
    """An answer the run expects now and then (a withdrawal before its winnings settled)."""


class Tables:
    """`clients` threads, each a table that opens a game and posts its deal, again and again."""

    def __init__(self, bases: list[str], key: str, players: list[str], clients: int, run: str,
                 deposits_key: str | None = None):  # fmt: skip
        self.tally = Tally()
        # each game also credits a deposit, withdraws and registers (payments and games scope)
        self.deposits_key = deposits_key
        self.tournament = next(iter(Client(bases, key, self.tally).call(
            "get", "GET", "tournaments")["tournaments"]), {}).get("slug")  # fmt: skip
        self.stop = threading.Event()
        self.bases, self.key, self.players, self.run = bases, key, players, run
        templates = Client(bases, key, self.tally).call("get", "GET", "templates")["templates"]
        rules = next(t for t in templates if t["slug"] == TEMPLATE)
        sim = Simulator(None, [], seed=7)  # only its hand builder: seats 0..3, named at play
        self.bodies = [sim._deal13(rules, list(range(SEATS)), 1) for _ in range(64)]
        self.threads = [
            threading.Thread(target=self._table, args=(n,), daemon=True) for n in range(clients)
        ]

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def finish(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=400)

    def _table(self, n: int) -> None:
        client = Client(spread(self.bases, n), self.key, self.tally)
        gateway = Client(spread(self.bases, n), self.deposits_key or "", self.tally)
        rng = random.Random(f"{self.run}-{n}")
        played = 0
        winner = None  # of this table's previous game
        entrants = iter(self.players[n :: len(self.threads)])  # each registers once
        while not self.stop.is_set():
            played += 1
            game_id = f"{self.run}-{n}-{played}"
            seated = rng.sample(self.players, SEATS)
            body = json.loads(json.dumps(rng.choice(self.bodies)))  # a private copy
            for result in body["results"]:
                result["player"] = seated[result["player"]]
            try:
                opening = {"game_id": game_id, "template": TEMPLATE, "players": seated}
                client.call("open", "POST", "games", opening)
                client.call("deal", "POST", f"games/{game_id}/deals", body)
            except urllib.error.HTTPError:
                continue  # counted as bad; the checks afterwards fail the run
            with self.tally.lock:
                self.tally.acked.append((game_id, time.monotonic()))
            if self.deposits_key:
                self._payments(client, gateway, game_id, seated[0], winner, next(entrants, None))
            declared = next(r for r in body["results"] if r["outcome"] == "declared")
            winner = declared["player"]

    def _payments(self, client: Client, gateway: Client, game_id: str, depositor: str,
                  winner: str | None, entrant: str | None) -> None:  # fmt: skip
        """A deposit; a withdrawal of ₹1 from the previous game's winner; a registration."""
        try:
            reference = f"{game_id}-d"
            deposit = {"amount": "10.00", "reference": reference}
            gateway.call("deposit", "POST", f"players/{depositor}/deposits", deposit)
            with self.tally.lock:
                self.tally.deposits.append(reference)
            if winner is not None:
                reference = f"{game_id}-w"
                withdrawal = {"amount": "1.00", "reference": reference}
                try:
                    gateway.call("withdrawal", "POST", f"players/{winner}/withdrawals",
                                 withdrawal, refusal="insufficient_funds")  # fmt: skip
                    with self.tally.lock:
                        self.tally.withdrawals.append(reference)
                except Refused:
                    pass
            if entrant is not None and self.tournament:
                path = f"tournaments/{self.tournament}/registrations"
                client.call("registration", "POST", path, {"player": entrant})
                with self.tally.lock:
                    self.tally.registrations.append(entrant)
        except urllib.error.HTTPError:
            pass  # counted as bad; the checks afterwards fail the run


def spread(bases: list[str], n: int) -> list[str]:
    """Client `n`'s nodes, its own first: clients spread evenly over the nodes."""
    first = n % len(bases)
    return bases[first:] + bases[:first]


def get_rate(bases: list[str], key: str, clients: int, seconds: float) -> tuple[float, Tally]:
    tally = Tally()
    stop = time.monotonic() + seconds

    def loop(n: int):
        client = Client(spread(bases, n), key, tally)
        while time.monotonic() < stop:
            client.call("get", "GET", "templates")

    threads = [threading.Thread(target=loop, args=(n,)) for n in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return len(tally.latency["get"]) / (time.perf_counter() - started), tally


# --- settlement and the checks --------------------------------------------------------------


def run_deals(run: str):
    return Deal.objects.filter(game__game_id__startswith=f"{run}-")


def unsettled(run: str, games: list[str]) -> int:
    if not games:
        return 0
    settled = run_deals(run).filter(status=Deal.Status.SETTLED, game__game_id__in=games).count()
    return len(games) - settled


def wait_settled(run: str, games: list[str], timeout: float) -> float:
    started = time.monotonic()
    while True:
        try:
            left = unsettled(run, games)
        except Exception:  # the database is restarting
            connection.close()
            left = -1
        if left == 0:
            return time.monotonic() - started
        if time.monotonic() - started > timeout:
            raise SystemExit(f"{left} acknowledged deals still unsettled after {timeout:.0f} s")
        time.sleep(0.2)


def api_answers(bases: list[str], key: str) -> bool:
    """Some node answers (as a load balancer in front of them would)."""
    for base in bases:
        request = urllib.request.Request(
            base + "/api/v1/templates", headers={"Authorization": f"Api-Key {key}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                if response.status == 200:
                    return True
        except OSError:
            continue
    return False


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def settlement_lags(run: str) -> list[float]:
    """Seconds from a deal's storing to its settlement (both by the database's clock)."""
    deals = run_deals(run).filter(status=Deal.Status.SETTLED)
    lags = deals.annotate(lag=F("settled_at") - F("created_at"))
    return [d.total_seconds() for d in lags.values_list("lag", flat=True)]


def check(run: str, acked: list[str], tally: Tally | None = None) -> dict:
    """Every acknowledged deal stored and settled once (and each deposit, withdrawal and
    registration the tally records present once), no game open, reconcile clean."""
    deposits = tally.deposits if tally else []
    games = Game.objects.filter(game_id__startswith=f"{run}-")
    stored = set(run_deals(run).values_list("game__game_id", flat=True))
    doubled = run_deals(run).values("game_id").annotate(n=Count("id")).filter(n__gt=1).count()
    references = [f"game:{pk}" for pk in games.values_list("pk", flat=True)]
    settlements = (
        Transfer.objects.filter(kind="settlement", reference__in=references)
        .values("reference")
        .annotate(n=Count("id"))
    )
    twice = [s["reference"] for s in settlements if s["n"] != 1]
    open_games = games.filter(status=Game.Status.OPEN)
    open_with_deal = open_games.filter(~Q(deals=None)).count()
    keys = [wallet_references.join(Transfer.Kind.DEPOSIT, r) for r in deposits]
    credited = Counter(
        Transfer.objects.filter(idempotency_key__in=keys).values_list("idempotency_key", flat=True)
    )
    payments = payments_check(tally) if tally else {}
    reconcile = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "reconcile"],
        env=os.environ, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    return {
        "acknowledged": len(acked),
        "lost": sorted(set(acked) - stored)[:10],
        "deposits_acknowledged": len(deposits),
        "deposits_lost": sorted(set(keys) - set(credited))[:10],
        "deposits_doubled": sum(1 for n in credited.values() if n > 1),
        **payments,
        "stored_not_acknowledged": len(stored - set(acked)),
        "deals_doubled": doubled,
        "settled_more_than_once": twice[:10],
        "games_open_with_a_deal": open_with_deal,
        "games_opened_without_deal": open_games.count() - open_with_deal,
        "reconcile_exit": reconcile.returncode,
        "reconcile_tail": reconcile.stdout.strip().splitlines()[-3:],
    }


def payments_check(tally: Tally) -> dict:
    """Each acknowledged withdrawal stored once with its request's transfer; each acknowledged
    registration stored once with its entry's transfer (references and keys are unique, so
    "doubled" counts a row whose money moved twice under two keys: none can)."""
    withdrawals = dict(
        Withdrawal.objects.filter(reference__in=tally.withdrawals)
        .exclude(request_transfer=None)
        .values_list("reference", "pk")
    )
    registrations = Registration.objects.filter(
        player__external_id__in=tally.registrations, tournament__slug__startswith="chaos-"
    ).values_list("player__external_id", "tournament_id", "pk")
    keys = {tournament_key(t, "entry", pk): player for player, t, pk in registrations}
    entered = Counter(
        keys[k]
        for k in Transfer.objects.filter(idempotency_key__in=keys).values_list(
            "idempotency_key", flat=True
        )
    )
    return {
        "withdrawals_acknowledged": len(tally.withdrawals),
        "withdrawals_lost": sorted(set(tally.withdrawals) - set(withdrawals))[:10],
        "registrations_acknowledged": len(tally.registrations),
        "registrations_lost": sorted(set(tally.registrations) - set(entered))[:10],
        "registrations_doubled": sum(1 for n in Counter(p for p, _, _ in registrations).values()
                                     if n > 1),
    }  # fmt: skip


# --- faults -----------------------------------------------------------------------------------


def broker_kind() -> str:
    url = settings.CELERY_BROKER_URL
    if not SYSTEM or url.startswith("redis+socket"):
        return "embedded-redis"
    return "rabbitmq" if url.startswith("amqp") else "redis"


def broker_down() -> None:
    kind = broker_kind()
    if kind == "embedded-redis":
        os.kill(embedded.redis_pid(settings.DATA_DIR), signal.SIGSTOP)
    elif kind == "rabbitmq":
        subprocess.run(["rabbitmqctl", "stop_app"], check=True, capture_output=True)
    else:
        subprocess.run(["redis-cli", "-p", "6379", "shutdown", "nosave"], capture_output=True)


def broker_up() -> None:
    kind = broker_kind()
    if kind == "embedded-redis":
        os.kill(embedded.redis_pid(settings.DATA_DIR), signal.SIGCONT)
    elif kind == "rabbitmq":
        subprocess.run(["rabbitmqctl", "start_app"], check=True, capture_output=True)
    else:  # as the machine starts it (/work/.library/env/machines/python-svc.md)
        subprocess.run(
            ["redis-server", "--daemonize", "yes", "--bind", "127.0.0.1", "-::1", "--port",
             "6379", "--save", "", "--appendonly", "no", "--dir", "/var/lib/redis",
             "--logfile", "/var/log/redis/ci.log"],
            check=True,
        )  # fmt: skip


def postgres_restart(stack: Stack) -> None:
    if SYSTEM:
        subprocess.run(
            ["pg_ctlcluster", "--skip-systemctl-redirect", "15", "main", "restart"], check=True
        )
    else:  # a fast shutdown; `serve` notices and starts it again
        after = len(stack.log())
        os.kill(embedded.postgres_pid(settings.DATA_DIR), signal.SIGINT)
        stack.wait_for(r"^serve: embedded PostgreSQL restarted", 60, after)


def gunicorn_worker(stack: Stack) -> int:
    master = stack.pid_of("web")
    children = subprocess.run(
        ["pgrep", "-P", str(master)], capture_output=True, text=True
    ).stdout.split()
    return int(children[0])


def faults(stack: Stack) -> list[tuple[str, object]]:
    def kill_worker():
        os.kill(stack.pid_of("worker1"), signal.SIGKILL)

    def kill_web_worker():
        os.kill(gunicorn_worker(stack), signal.SIGKILL)

    def broker_outage():
        broker_down()
        time.sleep(BROKER_DOWN_SECONDS)
        broker_up()

    return [
        ("celery worker kill -9", kill_worker),
        ("gunicorn worker kill -9", kill_web_worker),
        (f"broker down {BROKER_DOWN_SECONDS} s ({broker_kind()})", broker_outage),
        ("PostgreSQL restart", lambda: postgres_restart(stack)),
    ]


LEADER = r"beat: this node now schedules"
LOST = r"beat: lost the database connection holding the lock"


def schedules(stack: Stack) -> bool:
    """Its beat's last word on the lock (rummy_ledger.beat) is that it took it."""
    said = re.findall(f"{LEADER}|{LOST}", stack.log())
    return bool(said) and re.match(LEADER, said[-1]) is not None


def node_faults(stacks: list[Stack], notes: dict) -> list[tuple[str, object]]:
    """Two nodes: kill -9 the one whose beat schedules; the other's beat must take over."""

    def kill_leader_node():
        leaders = [s for s in stacks if schedules(s)]
        if len(leaders) != 1:
            raise SystemExit(f"{len(leaders)} nodes say their beat schedules, not one")
        leader, survivor = leaders[0], next(s for s in stacks if s is not leaders[0])
        after = len(survivor.log())
        killed_at = time.monotonic()
        notes["killed_node_port"] = leader.port
        notes["processes_killed"] = leader.kill_node()

        def takeover():
            survivor.wait_for(LEADER, 120, after)
            notes["beat_takeover_s"] = round(time.monotonic() - killed_at, 2)

        threading.Thread(target=takeover, daemon=True).start()

    return [("node kill -9 (serve, gunicorn master and workers, beat, Celery workers)",
             kill_leader_node)]  # fmt: skip


def failover_faults(mode: str, notes: dict) -> list[tuple[str, object]]:
    """The primary's node lost (ha/cluster.py failover), then the new primary's: over and back."""

    def failover():
        notes.setdefault("failovers", []).append(ha_cluster.failover(mode))

    return [(f"failover {n} ({mode}: every process of the primary's node)", failover)
            for n in (1, 2)]  # fmt: skip


# the acknowledged writes a failover run counts: games with their deal, then the payments'
KINDS = ("", "deposits_", "withdrawals_", "registrations_")


def failover_summary(figures: dict) -> dict:
    """The failover run's headline, first in the last line's JSON."""
    checked = figures.get("fault_check", {})
    failovers = figures.get("failovers", [])
    return {
        "failover": FAILOVER,
        "acknowledged": sum(checked.get(f"{kind}acknowledged", 0) for kind in KINDS),
        "lost": sum(len(checked.get(f"{kind}lost", [])) for kind in KINDS),
        "doubled": checked.get("deals_doubled", 0) + checked.get("deposits_doubled", 0)
        + checked.get("registrations_doubled", 0)
        + len(checked.get("settled_more_than_once", [])),
        "stuck_games": checked.get("games_open_with_a_deal", 0),
        "reconcile_clean": checked.get("reconcile_exit") == 0,
        "promotion_s": [f["promotion_s"] for f in failovers],
        "rejoin_s": [f["rejoin_s"] for f in failovers],
        "unavailable_s": figures.get("unavailable_s", []),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--phase-seconds", type=float, default=20)
    parser.add_argument("--web-workers", type=int, default=3)
    parser.add_argument("--no-faults", action="store_true")
    parser.add_argument(
        "--failover", choices=("kill", "freeze"),
        help="lose the database's primary node under load (ha/cluster.py), over and back",
    )  # fmt: skip
    parser.add_argument(
        "--nodes", type=int, default=1, choices=(1, 2),
        help="2: two serve instances on the machine's servers, load over both, one killed -9",
    )  # fmt: skip
    args = parser.parse_args()
    if args.nodes > 1 and not SYSTEM:
        raise SystemExit("--nodes 2 runs on the machine's servers: set DATABASE_URL and "
                         "CELERY_BROKER_URL (e.g. PostgreSQL 15 and RabbitMQ)")  # fmt: skip
    # nodes behind one load balancer share the key (sessions, signed links)
    if args.nodes > 1 or args.failover:
        os.environ.setdefault("DJANGO_SECRET_KEY", secrets.token_urlsafe(50))
    node_dirs = [Path(tempfile.mkdtemp(prefix=f"rl-node-{n}-")) for n in range(args.nodes)]
    # One after the other (serve's migrate would take turns anyway, under an advisory lock).
    stacks = (
        [Stack(args.web_workers, node_dir) for node_dir in node_dirs]
        if args.nodes > 1
        else [Stack(args.web_workers)]
    )
    bases = [stack.base for stack in stacks]
    figures: dict = {"nodes": args.nodes, "clients": args.clients,
                     "web_workers": args.web_workers,
                     "celery_workers": 2, "broker": broker_kind(),
                     "database": "postgresql-15" if SYSTEM else "embedded"}  # fmt: skip
    try:
        key, players = seed()
        if args.failover:
            figures |= fault_run(stacks, bases, key, players, args)
            return
        get_per_s, get_tally = get_rate(bases, key, args.clients, args.phase_seconds)

        run = f"c{uuid.uuid4().hex[:6]}"
        tables = Tables(bases, key, players, args.clients, run)
        started = time.perf_counter()
        tables.start()
        time.sleep(args.phase_seconds)
        tables.finish()
        elapsed = time.perf_counter() - started
        acked = [g for g, _ in tables.tally.acked]
        wait_settled(run, acked, 120)
        lat = tables.tally.latency
        lags = settlement_lags(run)
        deals_per_s, opens_per_s = len(lat["deal"]) / elapsed, len(lat["open"]) / elapsed
        figures |= {
            "get_per_s": round(get_per_s, 1),
            "deal_posts_per_s": round(deals_per_s, 1),
            "opens_per_s": round(opens_per_s, 1),
            "deal_ratio_to_get": round(deals_per_s / get_per_s, 3),
            "open_ratio_to_get": round(opens_per_s / get_per_s, 3),
            "ingest_p50_ms": round(percentile(lat["deal"], 50) * 1000, 1),
            "ingest_p99_ms": round(percentile(lat["deal"], 99) * 1000, 1),
            "open_p99_ms": round(percentile(lat["open"], 99) * 1000, 1),
            "get_p99_ms": round(percentile(get_tally.latency["get"], 99) * 1000, 1),
            "settlement_lag_p50_s": round(percentile(lags, 50), 3),
            "settlement_lag_p99_s": round(percentile(lags, 99), 3),
        }
        print(
            f"no fault, {args.nodes} node(s), {args.clients} clients: GET /templates "
            f"{get_per_s:,.0f}/s; deal posts "
            f"{deals_per_s:,.0f}/s = {deals_per_s / get_per_s:.2f} x GET (goal 0.5), game opens "
            f"{opens_per_s:,.0f}/s = {opens_per_s / get_per_s:.2f} x GET (goal 0.5); ingest p50 "
            f"{figures['ingest_p50_ms']} ms, p99 {figures['ingest_p99_ms']} ms (goal < 100); "
            f"settlement lag p50 {figures['settlement_lag_p50_s']} s, p99 "
            f"{figures['settlement_lag_p99_s']} s (goal < 2)",
            flush=True,
        )
        figures["no_fault_check"] = check(run, acked)

        if not args.no_faults:
            figures |= fault_run(stacks, bases, key, players, args)
    finally:
        for stack in stacks:
            stack.stop()
        for node_dir in node_dirs:
            shutil.rmtree(node_dir, ignore_errors=True)
        connection.close()
        if FAILOVER:
            ha_cluster.stop()
            figures = failover_summary(figures) | figures
            report(figures)
        if not SYSTEM:
            embedded.stop_redis(settings.DATA_DIR)
            embedded.stop_postgres(settings.DATA_DIR)
            shutil.rmtree(settings.DATA_DIR, ignore_errors=True)
    if not FAILOVER:
        report(figures)


def report(figures: dict) -> None:
    """The verdict, then the figures: the last line is one JSON object."""
    failed = [
        name for name in ("no_fault_check", "fault_check") if name in figures
        and (figures[name]["lost"] or figures[name]["deals_doubled"]
             or figures[name]["settled_more_than_once"] or figures[name]["games_open_with_a_deal"]
             or figures[name]["reconcile_exit"]
             or any(figures[name].get(f"{kind}lost") for kind in KINDS)
             or figures[name].get("deposits_doubled")
             or figures[name].get("registrations_doubled"))
    ] + (["bad_answers"] if figures.get("bad_answers") else [])  # fmt: skip
    if FAILOVER and "fault_check" not in figures:
        failed.append("the failover run did not finish")
    if failed:
        print(f"faults: FAILED {failed}", flush=True)
    else:
        print("faults: every acknowledged write stored exactly once, every deal settled once, "
              "no game stuck, reconcile clean")  # fmt: skip
    print(json.dumps(figures, default=str), flush=True)
    if failed:
        raise SystemExit(1)


def fault_run(stacks: list[Stack], bases: list[str], key: str, players: list[str], args) -> dict:
    run = f"f{uuid.uuid4().hex[:6]}"
    tables = Tables(bases, key, players, args.clients, run,
                    deposits_key=payments_key() if args.failover else None)  # fmt: skip
    started = time.perf_counter()
    tables.start()
    recoveries: dict = {}
    notes: dict = {}
    windows = []
    if args.failover:
        injected_faults = failover_faults(args.failover, notes)
    elif len(stacks) == 1:
        injected_faults = faults(stacks[0])
    else:
        injected_faults = node_faults(stacks, notes)
    try:
        time.sleep(args.phase_seconds / 2)
        for name, inject in injected_faults:
            injected = time.monotonic()
            inject()
            with tables.tally.lock:
                acked = [g for g, _ in tables.tally.acked]
            while not api_answers(bases, key):
                time.sleep(0.1)
            wait_settled(run, acked, 300)
            recoveries[name] = round(time.monotonic() - injected, 2)
            windows.append((injected, time.monotonic()))
            print(f"fault: {name}: full recovery in {recoveries[name]} s", flush=True)
            connection.close()
            time.sleep(args.phase_seconds / 2)
    finally:
        tables.finish()
    elapsed = time.perf_counter() - started
    acked = [g for g, _ in tables.tally.acked]
    wait_settled(run, acked, 300)
    lat = tables.tally.latency
    lags = settlement_lags(run)
    answers = {f"{op} {status}": n for (op, status), n in sorted(tables.tally.answers.items(),
                                                                  key=str)}  # fmt: skip
    result = {
        "unavailable_s": [refused_span(tables.tally.refused, w) for w in windows],
        "fault_seconds": round(elapsed, 1),
        "fault_deals_per_s": round(len(lat["deal"]) / elapsed, 1),
        "fault_ingest_p50_ms": round(percentile(lat["deal"], 50) * 1000, 1),
        "fault_ingest_p99_ms": round(percentile(lat["deal"], 99) * 1000, 1),
        "fault_settlement_lag_p50_s": round(percentile(lags, 50), 3),
        "fault_settlement_lag_p99_s": round(percentile(lags, 99), 3),
        "fault_settlement_lag_max_s": round(max(lags, default=0), 3),
        "recovery_s": recoveries,
        **notes,
        "answers": answers,
        "bad_answers": tables.tally.bad[:20],
    }
    print(
        f"with faults: {result['fault_deals_per_s']} deals/s over {result['fault_seconds']} s, "
        f"ingest p50 {result['fault_ingest_p50_ms']} ms p99 {result['fault_ingest_p99_ms']} ms, "
        f"settlement lag p50 {result['fault_settlement_lag_p50_s']} s p99 "
        f"{result['fault_settlement_lag_p99_s']} s max {result['fault_settlement_lag_max_s']} s; "
        f"answers {answers}",
        flush=True,
    )
    result["fault_check"] = check(run, acked, tables.tally if args.failover else None)
    return result


def refused_span(refused: list[float], window: tuple[float, float]) -> float:
    """Seconds from the first to the last write refused during a fault (0: none was)."""
    inside = [t for t in refused if window[0] <= t <= window[1]]
    return round(max(inside) - min(inside), 1) if inside else 0.0


if __name__ == "__main__":
    main()
