"""Finance admin pages over a ledger of ENTRIES entries: each must answer in under 300 ms.

Seeds the ledger exactly as `bench/reconcile.py` does (its `seed()`: deposits, chips grants,
small fees and finished four-seat games over 30 days, in its own database `bench_admin_pages`,
dropped and recreated), then times, through Django's test client (the whole request: URL
resolution, middleware, the admin, the queries, the template), as a finance viewer:

- a trivial admin page (the baseline: the password-change form);
- the home page (the admin index: what waits and what is wrong, `wallets.admin.dashboard`), with
  WAITING withdrawals to review, proposed adjustments and stuck-withdrawal discrepancies of the
  last reconciliation added, so each of its capped counts has more rows than it counts;
- the transfers and entries lists, unfiltered and by a date filter;
- searches: transfers by an external game id, entries by a player's external id;
- the accounts list of platform accounts (balances summed from their entries);
- the games list, a 30-day statement of the busiest player, the fee report (14 and 30 days),
  and the 30-day fee report's first load: on a fresh install (every day read from the ledger)
  and after the nightly job stored the closed days (today read from the ledger).

Each page is fetched RUNS times after a warm-up; the figure is the median. It also shows the
count each big list runs (`wallets.admin.paging`: PostgreSQL's estimate, or a count capped at
10,000 rows) against Django's full `COUNT(*)` it replaces. The last line is one JSON object.

Run: `.venv/bin/python bench/admin_pages.py [--entries 1000000] [--runs 5] [--waiting 20000]`
(RUMMY_EMBEDDED=1, as `make bench` sets, or DATABASE_URL's server). The machine is shared: the
figures are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["BENCH_DATABASE"] = "bench_admin_pages"

# isort: off
from bench.reconcile import recreate_database, seed  # noqa: E402  (sets Django up: first)

# isort: on
from django.contrib.auth.models import Group, User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402
from djmoney.money import Money  # noqa: E402

from tournaments.games.services.escrow import fee_account_id  # noqa: E402
from tournaments.games.services.fee_report import fee_days_close  # noqa: E402
from tournaments.models import FeeDay, Game  # noqa: E402
from tournaments.references import game_pk_of  # noqa: E402
from wallets.models import (  # noqa: E402
    CASH,
    Account,
    Adjustment,
    Discrepancy,
    Entry,
    Player,
    ReconciliationReport,
    Transfer,
    Withdrawal,
)
from wallets.roles import VIEWER, roles_ensure  # noqa: E402

GOAL_MS = 300.0


def viewer_client() -> Client:
    roles_ensure()
    user = User.objects.create_user(username="bench-viewer", is_staff=True)
    user.groups.add(Group.objects.get(name=VIEWER))
    client = Client()
    client.force_login(user)
    return client


def seed_waiting(n: int) -> None:
    """What the home page counts, n of each: withdrawals to review, proposed adjustments, and
    stuck withdrawals in the last reconciliation's report (rows only: no money moves)."""
    players = list(Player.objects.order_by("pk")[:n])
    staff = User.objects.create_user(username="bench-operator", is_staff=True)
    zero = Money(0, CASH)
    Withdrawal.objects.bulk_create(
        Withdrawal(
            player=players[i % len(players)],
            reference=f"bench-wd-{i}",
            amount=Money(100, CASH),
            net_winnings=0,
            taxed_net_winnings=0,
            tds=zero,
            payout=Money(100, CASH),
            pan="ABCDE1234F",
            needs_approval=True,
        )
        for i in range(n)
    )
    Adjustment.objects.bulk_create(
        Adjustment(
            player=players[i % len(players)],
            bucket="deposit",
            direction="credit",
            amount=Money(1, CASH),
            reason="bench",
            proposed_by=staff,
        )
        for i in range(n)
    )
    report = ReconciliationReport.objects.create(
        trigger="command", status="discrepancies", discrepancy_count=n
    )
    Discrepancy.objects.bulk_create(
        Discrepancy(report=report, kind="withdrawal_stuck", subject=f"withdrawal bench-wd-{i}")
        for i in range(n)
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def busiest_player() -> Player:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT a.player_id FROM wallets_entry e JOIN wallets_account a ON a.id = e.account_id"
            " WHERE a.bucket = 'deposit' GROUP BY 1 ORDER BY count(*) DESC LIMIT 1"
        )
        return Player.objects.get(pk=cursor.fetchone()[0])


def pages() -> dict[str, str]:
    today = timezone.localdate()
    player = busiest_player()
    settled = Transfer.objects.filter(kind="settlement", reference__startswith="game:").first()
    game = Game.objects.get(pk=game_pk_of(settled.reference))
    month = {"start": (today - timedelta(days=29)).isoformat(), "end": today.isoformat()}
    since = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    week = urlencode({"created_at__gte": str(since - timedelta(days=7))})  # as the filter links
    statement = f"/admin/wallets/player/{player.pk}/statement/"
    return {
        "baseline: password-change form": "/admin/password_change/",
        "home page (what waits, today's money)": "/admin/",
        "transfers list": "/admin/wallets/transfer/",
        "transfers, last 7 days": f"/admin/wallets/transfer/?{week}",
        "entries list": "/admin/wallets/entry/",
        "entries, last 7 days": f"/admin/wallets/entry/?{week}",
        f"search transfers by game id {game.game_id}": f"/admin/wallets/transfer/?q={game.game_id}",
        f"search entries by player {player.external_id}": "/admin/wallets/entry/"
        f"?q={player.external_id}",
        "platform accounts (summed balances)": "/admin/wallets/account/?kind__exact=platform",
        "games list": "/admin/tournaments/game/",
        f"30-day statement of {player.external_id}": f"{statement}?bucket=deposit"
        f"&start={month['start']}&end={month['end']}",
        "fee report, 14 days (default)": "/admin/tournaments/game/fee-report/",
        "fee report, 30 days": f"/admin/tournaments/game/fee-report/?start={month['start']}"
        f"&end={month['end']}",
    }


def time_page(client: Client, url: str, runs: int) -> tuple[float, int]:
    response = client.get(url)  # warm-up
    assert response.status_code == 200, (url, response.status_code)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        response = client.get(url)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000, len(response.content)


def time_sql(sql: str, runs: int = 3) -> float:
    with connection.cursor() as cursor:
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            cursor.execute(sql)
            cursor.fetchall()
            times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--waiting", type=int, default=20_000)
    args = parser.parse_args()

    recreate_database()
    call_command("migrate", verbosity=0)
    figures = seed(args.entries)
    print(f"seeded {figures['entries']:,} entries in {figures['seed_s']} s", flush=True)
    seed_waiting(args.waiting)
    client = viewer_client()

    results = {}
    for name, url in pages().items():
        ms, size = time_page(client, url, args.runs)
        results[name] = {"ms": round(ms, 1), "kb": round(size / 1024, 1), "url": url}
    baseline = results.pop("baseline: password-change form")["ms"]
    print(f"baseline (password-change form): {baseline:.1f} ms (median of {args.runs})")
    for name, r in results.items():
        r["ratio"] = round(r["ms"] / baseline, 2)
        r["meets_goal"] = r["ms"] < GOAL_MS
        verdict = "ok" if r["meets_goal"] else f"OVER {GOAL_MS:.0f} ms"
        print(f"  {name:<48} {r['ms']:>7.1f} ms  x{r['ratio']:<5} {r['kb']:>6.1f} KB  {verdict}")

    # the fee report reads closed days from FeeDay (tournaments.games.services.fee_report): its
    # first load on a fresh install reads every day from the ledger; once the nightly job has stored
    # the closed days, a first load reads today only
    fee_url = results["fee report, 30 days"]["url"]
    fee_account = Account.objects.get(pk=fee_account_id())

    def first_load(nightly_close: bool) -> float:
        FeeDay.objects.all().delete()
        if nightly_close:
            fee_days_close(fee_account=fee_account)
        t0 = time.perf_counter()
        client.get(fee_url)
        return (time.perf_counter() - t0) * 1000

    cold, after_close = first_load(nightly_close=False), first_load(nightly_close=True)
    print(f"  {'fee report, 30 days, first load (nothing stored)':<48} {cold:>7.1f} ms")
    print(f"  {'fee report, 30 days, first load after nightly job':<48} {after_close:>7.1f} ms")

    full_count = time_sql(f"SELECT count(*) FROM {Entry._meta.db_table}")
    capped = time_sql(f"SELECT count(*) FROM (SELECT 1 FROM {Entry._meta.db_table} LIMIT 10001) c")
    estimate = time_sql(
        f"SELECT reltuples FROM pg_class WHERE oid = '{Entry._meta.db_table}'::regclass"
    )
    print(
        f"count of the entries list: Django's full COUNT(*) {full_count:.1f} ms; "
        f"what the list runs: estimate {estimate:.2f} ms (unfiltered), "
        f"capped count {capped:.1f} ms (filtered)"
    )
    print(json.dumps({
        **figures,
        "runs": args.runs,
        "baseline_ms": baseline,
        "pages": results,
        "goal_ms": GOAL_MS,
        "all_meet_goal": all(r["meets_goal"] for r in results.values()),
        "fee_report_30_days_first_load_ms": round(cold, 1),
        "fee_report_30_days_first_load_after_nightly_ms": round(after_close, 1),
        "entries_full_count_ms": round(full_count, 1),
        "entries_capped_count_ms": round(capped, 1),
        "entries_estimate_ms": round(estimate, 2),
    }))  # fmt: skip


if __name__ == "__main__":
    main()
