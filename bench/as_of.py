"""As-of balances and the admin's statement with HISTORY entries in six closed months.

Seeds as `bench/reconcile.py --history-entries` does (its `seed_setup`, `seed_period` and
`months_close`, in its own database `bench_as_of`, dropped and recreated): HISTORY entries over
the six IST months before this one, closed by maker-checker, and OPEN entries in this month so
far. Then times, RUNS times after a warm-up (medians), for the busiest player's deposit account:

- its as-of balance now (`wallets.services.balances.balances_at`: the last close plus the
  entries since), beside the sum of every entry before now that an as-of balance read before
  the closes (the same SQL `statement()` ran for its opening);
- the admin's statement page of this month and of the last 30 days, and of a closed month,
  through Django's test client as a finance viewer (`bench/admin_pages.py`'s);
- and it counts the entries' partitions in the as-of balance's plan (`EXPLAIN`): only this
  month's (and the months ahead with nothing in them) may appear, never a closed one.

The last line is one JSON object. Run: `.venv/bin/python bench/as_of.py [--history-entries
10000000] [--open-entries 500000] [--runs 5]` (RUMMY_EMBEDDED=1 or DATABASE_URL's server).
The machine is shared: run it once, on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["BENCH_DATABASE"] = "bench_as_of"

# isort: off
from bench.reconcile import (  # noqa: E402  (sets Django up on bench_as_of: first)
    months_close,
    recreate_database,
    seed_period,
    seed_setup,
)
from bench.admin_pages import busiest_player, time_page, viewer_client  # noqa: E402

# isort: on
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402

from wallets.models import Account  # noqa: E402
from wallets.months import Month, months_between  # noqa: E402
from wallets.services.balances import balances_at  # noqa: E402

GOAL_MS = 300


def median_ms(run, runs: int) -> float:
    run()  # warm-up
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return round(statistics.median(times) * 1000, 2)


def plan_partitions(run) -> list[str]:
    """The entries' partitions the plans of `run`'s queries read."""
    with CaptureQueriesContext(connection) as captured:
        run()
    found = set()
    with connection.cursor() as cursor:
        for query in captured.captured_queries:
            if "wallets_entry" in query["sql"]:
                cursor.execute("EXPLAIN " + query["sql"])
                plan = "\n".join(row[0] for row in cursor.fetchall())
                found |= set(re.findall(r"wallets_entry_\d{4}_\d\d", plan))
    return sorted(found)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--history-entries", type=int, default=10_000_000)
    parser.add_argument("--open-entries", type=int, default=500_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    recreate_database()
    call_command("migrate", verbosity=0)
    now = timezone.now()
    this = Month.of(now)
    first = this.next(-6)
    players = max(100, min(args.open_entries // 50, args.open_entries // 40))
    params = seed_setup(players)
    history = seed_period(
        params, args.history_entries, end=this.start, days=(this.start - first.start).days
    )
    print(f"seeded {args.history_entries:,} entries over {first}..{this.previous()} in "
          f"{history['seed_s']} s", flush=True)  # fmt: skip
    close_s = months_close(months_between(first, this.previous()))
    print(f"closed six months: {close_s} s", flush=True)
    opened = seed_period(params, args.open_entries, end=now, days=max(1, (now - this.start).days))
    print(f"seeded {args.open_entries:,} open entries in {opened['seed_s']} s", flush=True)

    player = busiest_player()
    account = Account.objects.get(player=player, bucket="deposit")
    moment = timezone.now()
    as_of_ms = median_ms(lambda: balances_at(accounts=[account.pk], moment=moment), args.runs)
    every_entry = "SELECT sum(amount) FROM wallets_entry WHERE account_id = %s AND created_at < %s"

    def whole_history() -> None:
        with connection.cursor() as cursor:
            cursor.execute(every_entry, [account.pk, moment])
            cursor.fetchall()

    whole_history_ms = median_ms(whole_history, args.runs)
    read = plan_partitions(lambda: balances_at(accounts=[account.pk], moment=moment))
    closed = {m.partition for m in months_between(first, this.previous())}

    client = viewer_client()
    statement = f"/admin/wallets/player/{player.pk}/statement/?bucket=deposit"
    today = timezone.localdate()
    last_closed = this.previous()
    local = timezone.localtime
    urls = {
        "statement, this month": f"{statement}&start={local(this.start).date()}&end={today}",
        "statement, last 30 days": f"{statement}&start={today - timedelta(days=29)}&end={today}",
        f"statement, {last_closed} (closed)": f"{statement}&start="
        f"{local(last_closed.start).date()}&end={local(last_closed.end).date() - timedelta(1)}",
    }
    pages = {name: round(time_page(client, url, args.runs)[0], 1) for name, url in urls.items()}
    for name, ms in pages.items():
        print(f"{name}: {ms:.1f} ms (goal < {GOAL_MS})")
    print(f"as-of balance now: {as_of_ms} ms; the sum of every entry before now: "
          f"{whole_history_ms} ms; partitions in the plan: {read}")  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM wallets_entry")
        (entries,) = cursor.fetchone()
        cursor.execute("SELECT count(*) FROM wallets_entry WHERE account_id = %s", [account.pk])
        (account_entries,) = cursor.fetchone()
    print(
        json.dumps(
            {
                "history_entries": args.history_entries,
                "open_entries": args.open_entries,
                "entries": entries,
                "players": players,
                "account_entries": account_entries,
                "seed_history_s": history["seed_s"],
                "close_s": close_s,
                "as_of_ms": as_of_ms,
                "whole_history_sum_ms": whole_history_ms,
                "plan_partitions": read,
                "plan_reads_closed_month": bool(closed & set(read)),
                "pages_ms": pages,
                "goal_ms": GOAL_MS,
                "meets_goal": max(pages.values()) < GOAL_MS and as_of_ms < GOAL_MS,
            }
        )
    )


if __name__ == "__main__":
    main()
