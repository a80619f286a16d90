"""`manage.py verify_ledger` over an untouched ledger of ENTRIES entries, against one plain
aggregate over the same entries.

Seeds the ledger exactly as `bench/reconcile.py` does (its `seed()`, set-based SQL, in a database
of its own, `bench_verify`), and gives each seeded game a stored deal (four players' hands and
points) linked to its settlement's transfers, as settlement links them, so the games' witness
provider does its real work. Then times, in the same run:
- the baseline: `SELECT account_id, sum(amount) FROM wallets_entry GROUP BY account_id`;
- chaining the whole ledger at once (the job's `chain_extend`, as on the day the chain is
  deployed over an existing ledger);
- `manage.py verify_ledger` (the chain already up to date: the recomputation and comparison).
Prints seconds and entries per second; the last line is one JSON object with every figure.

Run: `.venv/bin/python bench/verify_ledger.py [--entries 1000000]`.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("BENCH_DATABASE", "bench_verify")

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from bench.reconcile import (  # noqa: E402  (sets Django up)
    recreate_database,
    seed,
    time_baseline,
)
from wallets.chain.links import chain_extend  # noqa: E402
from wallets.models import ChainLink  # noqa: E402

DEALS = """
INSERT INTO tournaments_deal
    (game_id, deal_no, wild_joker, results, payload_hash, points, discrepancies, status,
     created_at, settled_at)
SELECT g.id, 1, 'KD',
       jsonb_build_array(
           jsonb_build_object('player', 'p1', 'outcome', 'declared', 'groups',
                              '[["AS","2S","3S"],["6C","8C","KH"],["4D","4S","4C","4H"]]'::jsonb),
           jsonb_build_object('player', 'p2', 'outcome', 'first_drop'),
           jsonb_build_object('player', 'p3', 'outcome', 'middle_drop'),
           jsonb_build_object('player', 'p4', 'outcome', 'lost', 'groups',
                              '[["7S","8S","9S"],["3D","3H","3C"],["QD","JC","10H"]]'::jsonb)),
       md5(g.id::text) || md5(g.id::text),
       jsonb_build_object('p1', 0, 'p2', 20, 'p3', 40, 'p4', 50), '{}'::jsonb, 'settled',
       g.created_at, g.finished_at
  FROM tournaments_game g;
INSERT INTO tournaments_dealtransfer (deal_id, transfer_id)
SELECT d.id, t.id
  FROM tournaments_deal d
  JOIN tournaments_game g ON g.id = d.game_id
  JOIN wallets_transfer t ON t.reference = 'game:' || g.id AND t.kind = 'settlement'
 ORDER BY t.id;
ANALYZE tournaments_deal;
ANALYZE tournaments_dealtransfer;
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=1_000_000)
    args = parser.parse_args()
    connection.close()
    recreate_database()
    call_command("migrate", verbosity=0)
    figures = seed(args.entries)
    with connection.cursor() as cursor:
        cursor.execute(DEALS)
        cursor.execute("SELECT count(*) FROM tournaments_dealtransfer")
        (figures["settlement_transfers_with_deals"],) = cursor.fetchone()
    entries = figures["entries"]
    print(
        f"seeded {entries:,} entries in {figures['transfers']:,} transfers ({figures['seed_s']} s)"
    )

    time_baseline()  # warm the cache
    baseline = min(time_baseline() for _ in range(3))
    t0 = time.perf_counter()
    chained = chain_extend(wait=True)
    chain_s = time.perf_counter() - t0
    assert chained == ChainLink.objects.count() == figures["transfers"], chained
    out = io.StringIO()
    t0 = time.perf_counter()
    call_command("verify_ledger", stdout=out)  # exits non-zero on a difference
    verify_s = time.perf_counter() - t0
    assert "the chain verifies clean" in out.getvalue(), out.getvalue()

    print(f"baseline (one aggregate over the entries): {baseline:.2f} s")
    print(
        f"chaining the whole ledger (the job): {chain_s:.1f} s = {entries / chain_s:,.0f} entries/s"
    )
    print(
        f"verify_ledger: {verify_s:.1f} s = {entries / verify_s:,.0f} entries/s "
        f"= {verify_s / baseline:.1f} x the baseline"
    )
    figures |= {
        "baseline_s": round(baseline, 3),
        "chain_s": round(chain_s, 2),
        "chain_entries_per_s": round(entries / chain_s),
        "verify_s": round(verify_s, 2),
        "verify_entries_per_s": round(entries / verify_s),
        "verify_ratio": round(verify_s / baseline, 2),
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
