"""What the hash chain costs a posting, measured A/B on one server in one run.

The chain adds one thing to a posting: the transfer's `txid` column (an `xid8`, default
`pg_current_xact_id()`) and its entry in the commit-order index (txid, id); `ledger_post_batch`
is the same. So two databases are copied from one migrated and seeded template: A as migrated (the
chain's column and index), B with them dropped (the ledger before the chain). One connection to
each posts two-leg transfers between random escrow accounts (cached balances, row-locked, as a
player's), one transfer per transaction, in ROUNDS alternated rounds of POSTS each; the figure
is the median of each side's rounds, and the ratio A / B of the postings per second (goal: at
least 0.9, a posting at most 10 % dearer), and the WAL each posting writes (a figure a busy
machine does not blur). The chain's job runs in neither: it is measured by
`bench/verify_ledger.py` (chaining) and `bench/ledger.py` (postings while it runs).
The last line is one JSON object.

Run: `.venv/bin/python bench/chain_posting.py [--rounds 8] [--posts 1000]`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("BENCH_DATABASE", "bench_chain_template")

import psycopg  # noqa: E402
from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from bench.reconcile import recreate_database  # noqa: E402  (sets Django up, on BENCH_DATABASE)

TEMPLATE, A, B = "bench_chain_template", "bench_chain_a", "bench_chain_b"
ACCOUNTS = 200
GOAL = 0.9
SEED = f"""
INSERT INTO wallets_account (kind, code, bucket, balance, balance_currency, created_at)
SELECT 'escrow', 'escrow:chain-bench:' || n, '', 1000000000, 'INR', now()
  FROM generate_series(1, {ACCOUNTS}) AS n;
"""
WITHOUT_CHAIN = """
DROP INDEX transfer_commit_order_idx;
ALTER TABLE wallets_transfer DROP COLUMN txid;
"""
POST = """
SELECT transfer_id FROM ledger_post_batch(
    ARRAY[%(key)s], ARRAY['transfer'], ARRAY['bench'], ARRAY[''], ARRAY[NULL::bigint], ARRAY[''],
    ARRAY[1, 1], ARRAY[%(source)s, %(target)s]::bigint[], ARRAY[-1.00, 1.00]::numeric[],
    ARRAY['INR', 'INR'], '2s', NULL)
"""


def _params(dbname: str) -> dict:
    db = settings.DATABASES["default"]
    return {"dbname": dbname, "host": db.get("HOST") or None, "port": db.get("PORT") or None,
            "user": db.get("USER") or None, "password": db.get("PASSWORD") or None}  # fmt: skip


def prepare() -> list[int]:
    """A template migrated and seeded; A and B both copied from it (equally cold), B then
    without the chain's column and index."""
    recreate_database()
    call_command("migrate", verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute(SEED)
        cursor.execute("SELECT id FROM wallets_account WHERE code LIKE 'escrow:chain-bench:%%'")
        accounts = [row[0] for row in cursor.fetchall()]
    connection.close()
    with psycopg.connect(**_params("postgres"), autocommit=True) as admin:
        for name in (A, B):
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE}"')
    with psycopg.connect(**_params(B), autocommit=True) as conn:
        conn.execute(WITHOUT_CHAIN)
    return accounts


def _lsn(conn) -> int:
    return conn.execute("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn").fetchone()[0]


def round_rate(conn, accounts, posts: int, tag: str, rng: random.Random) -> tuple[float, float]:
    """(postings per second, WAL bytes per posting) of one round."""
    lsn, started = _lsn(conn), time.perf_counter()
    for n in range(posts):
        source, target = rng.sample(accounts, 2)
        conn.execute(POST, {"key": f"{tag}-{n}", "source": source, "target": target})
    seconds = time.perf_counter() - started
    return posts / seconds, float(_lsn(conn) - lsn) / posts


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--posts", type=int, default=1000)
    args = parser.parse_args()
    accounts = prepare()
    rng = random.Random(1)
    rates: dict[str, list[float]] = {A: [], B: []}
    wal: dict[str, list[float]] = {A: [], B: []}
    with (psycopg.connect(**_params(A), autocommit=True) as a,
          psycopg.connect(**_params(B), autocommit=True) as b):  # fmt: skip
        round_rate(a, accounts, 200, "warm", rng)
        round_rate(b, accounts, 200, "warm", rng)
        for r in range(args.rounds):
            order = [(A, a), (B, b)] if r % 2 == 0 else [(B, b), (A, a)]
            for name, conn in order:
                rate, wal_bytes = round_rate(conn, accounts, args.posts, f"r{r}", rng)
                rates[name].append(rate)
                wal[name].append(wal_bytes)
    with_chain, without = statistics.median(rates[A]), statistics.median(rates[B])
    ratio = with_chain / without
    print(f"without the chain's column: {without:,.0f} postings/s (median of {args.rounds})")
    print(f"with it: {with_chain:,.0f} postings/s = {ratio:.3f} x (goal >= {GOAL})")
    wal_with, wal_without = statistics.median(wal[A]), statistics.median(wal[B])
    print(
        f"WAL a posting (does not depend on the machine's load): {wal_without:,.0f} bytes "
        f"without, {wal_with:,.0f} with = {wal_with / wal_without:.3f} x"
    )
    print(json.dumps({
        "rounds": args.rounds, "posts_per_round": args.posts,
        "with_chain_per_s": round(with_chain, 1), "without_chain_per_s": round(without, 1),
        "ratio": round(ratio, 3), "goal_ratio": GOAL,
        "wal_bytes_with": round(wal_with), "wal_bytes_without": round(wal_without),
        "wal_ratio": round(wal_with / wal_without, 3),
        "with_chain_rounds": [round(x) for x in rates[A]],
        "without_chain_rounds": [round(x) for x in rates[B]],
    }))  # fmt: skip


if __name__ == "__main__":
    main()
