"""Ledger throughput against the database's own ceiling, measured in one run on one server.

1. pgbench's built-in TPC-B-like transaction (the baseline), CLIENTS clients.
2. The ledger's single-transfer rate: CLIENTS processes, each posting two-leg transfers between
   random players, one transfer per database transaction (`wallets.ledger.transfer_post`).
3. The batch rate: the same processes posting BATCH transfers per call (`transfers_post`).
4. Both again on an UN-ANALYSED database: a fresh one (`bench_ledger_fresh`, dropped and made
   anew by a child process), migrated and seeded with autovacuum off on the ledger's tables, as
   a freshly migrated server is before ANALYZE has run: the ledger's speed must not depend on
   table statistics (the first phase runs ANALYZE after seeding, so it is the analysed case).
Each ledger rate is printed as a ratio of the pgbench rate. The last line is one JSON object.

Run: `.venv/bin/python bench/ledger.py [--seconds 10] [--clients 4] [--skip-unanalysed]` (uses
its own databases on the embedded server, or DATABASE_URL's server if set).
"""

import argparse
import json
import multiprocessing
import os
import random
import re
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rummy_ledger.settings")
os.environ.setdefault("EMBEDDED_DATABASE_NAME", "bench_ledger")
os.environ.setdefault("LOG_LEVEL", "WARNING")

from bench.startup import django_start  # noqa: E402

django_start()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from djmoney.money import Money  # noqa: E402

from rummy_ledger.dev import embedded  # noqa: E402
from wallets.models import CASH, Account, Entry  # noqa: E402
from wallets.services.accounts import player_accounts  # noqa: E402
from wallets.services.deposits import deposit_register  # noqa: E402
from wallets.services.partitions import entry_partitions  # noqa: E402
from wallets.services.players import player_get_or_create  # noqa: E402
from wallets.services.transfers import Leg, TransferRequest, transfers_post  # noqa: E402

PLAYERS = 1000
BATCH = 100
FRESH_DATABASE = "bench_ledger_fresh"
LEDGER_TABLES = ("wallets_account", "wallets_entry", "wallets_transfer", "wallets_player")
ONE = Money(Decimal("1.00"), CASH)
GOAL_SINGLE, GOAL_BATCH = (
    0.5,
    3.0,
)  # ratios to pgbench TPC-B on the same server (docs/benchmarks.md)


def pgbench_tps(clients: int, seconds: int) -> float:
    db = settings.DATABASES["default"]
    pgbench = str(embedded.postgres_bin_dir() / "pgbench")
    if not embedded.postgres_attached(settings.DATA_DIR):  # the machine's server: its pgbench
        pgbench = "pgbench"
    conn = ["-h", db["HOST"] or "localhost", "-p", str(db["PORT"] or 5432), "-U", db["USER"]]
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = 'bench_pgbench'")
        if not cursor.fetchone():
            cursor.execute("CREATE DATABASE bench_pgbench")
    env = {**os.environ, "PGPASSWORD": db.get("PASSWORD") or ""}
    subprocess.run([pgbench, *conn, "-i", "-q", "-s", "10", "bench_pgbench"], check=True,
                   env=env, capture_output=True)  # fmt: skip
    out = subprocess.run(
        [pgbench, *conn, "-c", str(clients), "-j", str(clients), "-T", str(seconds), "-n",
         "bench_pgbench"],
        check=True, env=env, capture_output=True, text=True,
    ).stdout  # fmt: skip
    return float(re.search(r"tps = ([\d.]+)", out).group(1))


def seed_players() -> list[int]:
    ids = []
    for n in range(PLAYERS):
        external_id = f"bench-{n}"
        if not Account.objects.filter(code=f"player:{external_id}:deposit").exists():
            deposit_register(
                player_external_id=external_id,
                amount=Money("1000000.00", CASH),
                reference=f"bench-seed-{n}",
            )
        ids.append(
            player_accounts(player=player_get_or_create(external_id=external_id))["deposit"].pk
        )
    return ids


def _request(accounts: list[int], rng: random.Random, key: str) -> TransferRequest:
    source, target = rng.sample(accounts, 2)
    return TransferRequest(
        kind="transfer",
        reference="bench",
        idempotency_key=key,
        legs=[Leg(source, -ONE), Leg(target, ONE)],
    )


def _worker(mode: str, accounts: list[int], seconds: float, tag: str, queue) -> None:
    connection.close()  # never share the parent's connection across fork
    rng = random.Random(tag)
    done, n, deadline = 0, 0, time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        if mode == "single":
            transfers_post(requests=[_request(accounts, rng, f"{tag}-{n}")])
            done += 1
        else:
            transfers_post(
                requests=[_request(accounts, rng, f"{tag}-{n}-{i}") for i in range(BATCH)]
            )
            done += BATCH
        n += 1
    queue.put(done)
    connection.close()


def ledger_rate(mode: str, accounts: list[int], clients: int, seconds: float) -> float:
    connection.close()
    queue = multiprocessing.Queue()
    run = f"{mode}-{time.time_ns()}"
    processes = [
        multiprocessing.Process(target=_worker, args=(mode, accounts, seconds, f"{run}-{c}", queue))
        for c in range(clients)
    ]
    started = time.perf_counter()
    for process in processes:
        process.start()
    total = sum(queue.get() for _ in processes)
    for process in processes:
        process.join()
    return total / (time.perf_counter() - started)


def rates(accounts: list[int], clients: int, seconds: float) -> tuple[float, float]:
    single = ledger_rate("single", accounts, clients, seconds)
    batch = ledger_rate("batch", accounts, clients, seconds)
    return single, batch


def analyse(analysed: bool) -> None:
    with connection.cursor() as cursor:
        if analysed:
            for table in LEDGER_TABLES:
                cursor.execute(f"ANALYZE {table}")
            return
        # as a freshly migrated server: no statistics until autovacuum gets to it (the entries
        # are stored in their months' partitions: a partitioned table has no autovacuum of its own)
        entries = Entry._meta.db_table
        stored = [t for t in LEDGER_TABLES if t != entries]
        for table in stored + [month.partition for month in entry_partitions()]:
            cursor.execute(f"ALTER TABLE {table} SET (autovacuum_enabled = false)")


def unanalysed_rates(clients: int, seconds: int) -> tuple[float, float]:
    """Phase 4, in a child process on a database made anew (settings name it at start-up)."""
    env = {**os.environ, "BENCH_LEDGER_PHASE": "unanalysed"}
    with connection.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{FRESH_DATABASE}"')
        cursor.execute(f'CREATE DATABASE "{FRESH_DATABASE}"')
    # DATABASE_URL is set: by the environment, or by the start-up (bench/startup.py)
    url = urlsplit(os.environ["DATABASE_URL"])
    env["DATABASE_URL"] = urlunsplit(url._replace(path=f"/{FRESH_DATABASE}"))
    connection.close()
    out = subprocess.run(
        [sys.executable, __file__, "--seconds", str(seconds), "--clients", str(clients)],
        env=env, check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    figures = json.loads(out.strip().splitlines()[-1])
    return figures["single_per_s"], figures["batch_per_s"]


def child_phase(clients: int, seconds: int) -> None:
    call_command("migrate", verbosity=0)
    analyse(analysed=False)
    single, batch = rates(seed_players(), clients, seconds)
    print(json.dumps({"single_per_s": single, "batch_per_s": batch}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--skip-unanalysed", action="store_true")
    args = parser.parse_args()
    if os.environ.get("BENCH_LEDGER_PHASE") == "unanalysed":
        return child_phase(args.clients, args.seconds)
    call_command("migrate", verbosity=0)
    accounts = seed_players()
    analyse(analysed=True)

    baseline = pgbench_tps(args.clients, args.seconds)
    print(f"pgbench TPC-B-like, {args.clients} clients: {baseline:,.0f} tps (baseline)")
    figures = {"clients": args.clients, "seconds": args.seconds, "pgbench_tps": round(baseline, 1)}
    phases = [("analysed", lambda: rates(accounts, args.clients, args.seconds))]
    if not args.skip_unanalysed:
        phases.append(("unanalysed", lambda: unanalysed_rates(args.clients, args.seconds)))
    for name, measure in phases:
        single, batch = measure()
        print(
            f"{name} database: ledger single transfers: {single:,.0f}/s = "
            f"{single / baseline:.2f} x pgbench (goal {GOAL_SINGLE}); batched ({BATCH}/call): "
            f"{batch:,.0f}/s = {batch / baseline:.2f} x pgbench (goal {GOAL_BATCH})"
        )
        prefix = "" if name == "analysed" else "unanalysed_"
        figures |= {
            f"{prefix}single_per_s": round(single, 1),
            f"{prefix}single_ratio": round(single / baseline, 3),
            f"{prefix}batch_per_s": round(batch, 1),
            f"{prefix}batch_ratio": round(batch / baseline, 3),
        }
    figures |= {
        "batch_size": BATCH,
        "goal_single_ratio": GOAL_SINGLE,
        "goal_batch_ratio": GOAL_BATCH,
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
