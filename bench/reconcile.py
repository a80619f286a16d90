"""Nightly reconciliation over a ledger of ENTRIES entries, against one plain aggregate.

Seeds (with generate_series, in its own database `bench_reconcile`, dropped and recreated) a
ledger of ENTRIES entries, spread over 30 days: half deposits from the gateway clearing account,
chips grants and small fees; half finished four-seat games (entries into each game's escrow,
prize and fee out of it). Cached balances are set from the entries, and a gateway statement for
one day matches the deposits of that day. A last run plants discrepancies first (a tampered
cached balance, a deleted entry, an entry moved to another currency, a game whose fee was
changed) and records what it found. Then times, in the
same run and on the same table:
- the baseline: `SELECT account_id, sum(amount) FROM wallets_entry GROUP BY account_id`;
- `wallets.reconciliation.reconcile_run()` (every check, report stored).
Each is run RUNS times after a warm-up; the figures are the medians. Goal: ratio <= 3.
The last line is one JSON object with every figure.

With `--history-entries H --open-entries O` it measures what history costs the nightly run: O
entries in this month, copied to a database of their own (`bench_reconcile_open`), then H more
over the six months before, each closed as two people. The two databases are reconciled in
turn, RUNS times each after a warm-up of each; the ratio is history's median to the open
month's. Goal: ratio <= 1.3.

Run: `.venv/bin/python bench/reconcile.py [--entries 1000000] [--runs 3]`, or
`.venv/bin/python bench/reconcile.py --history-entries 5000000 --open-entries 500000 --runs 5`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlparse, urlunparse

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DB_NAME = os.environ.get("BENCH_DATABASE", "bench_reconcile")  # bench/admin_pages.py: its own
GOAL_RATIO = 3.0
GOAL_HISTORY_RATIO = 1.3  # with history in closed months, to the open month alone


def _use_own_database() -> None:
    """Point Django at a throwaway database on the same server, recreated on every run."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rummy_ledger.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    url = os.environ.get("DATABASE_URL")
    if url:
        os.environ["DATABASE_URL"] = urlunparse(urlparse(url)._replace(path=f"/{DB_NAME}"))
    else:
        os.environ["EMBEDDED_DATABASE_NAME"] = DB_NAME


_use_own_database()

from bench.startup import django_start  # noqa: E402

django_start()

import psycopg  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.auth.models import Group, User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from rummy_ledger.api.models import ApiClient  # noqa: E402
from tournaments.models import GameTemplate  # noqa: E402
from wallets.models import MonthClose, ReconciliationReport  # noqa: E402
from wallets.months import Month, months_between  # noqa: E402
from wallets.reconciliation import reconcile_run  # noqa: E402
from wallets.roles import APPROVER, OPERATOR  # noqa: E402
from wallets.services.months import month_close_propose  # noqa: E402
from wallets.services.partitions import entry_partition_ensure  # noqa: E402
from wallets.services.proposals import proposal_decide  # noqa: E402

OPEN_DB_NAME = f"{DB_NAME}_open"  # history mode: a copy of the open month alone


def _server() -> psycopg.Connection:
    db = settings.DATABASES["default"]
    params = {
        "host": db.get("HOST") or None,
        "port": db.get("PORT") or None,
        "user": db.get("USER") or None,
        "password": db.get("PASSWORD") or None,
    }
    return psycopg.connect(dbname="postgres", autocommit=True, **params)


def recreate_database() -> None:
    with _server() as conn:
        for name in (DB_NAME, OPEN_DB_NAME):
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{DB_NAME}"')


def database_copy(name: str) -> None:
    """Copy the bench's database as it stands to `name` (a template copy: no session may be
    connected to it meanwhile, autovacuum's included, so it is tried again a few times)."""
    connection.close()
    with _server() as conn:
        for attempt in range(20):
            try:
                conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{DB_NAME}"')
                return
            except psycopg.errors.ObjectInUse:
                if attempt == 19:
                    raise
                time.sleep(0.5)


def database_use(name: str) -> None:
    """Point Django's connection at another database of the same server."""
    connection.close()
    connection.settings_dict["NAME"] = name


SETUP = """
SET session_replication_role = replica;  -- bulk load: no append-only or per-row checks
INSERT INTO wallets_account (kind, code, bucket, balance, balance_currency, created_at)
SELECT 'platform', 'platform:' || code, '', 0, cur, now()
  FROM (VALUES ('fee_revenue', 'INR'), ('gst_payable', 'INR'), ('tds_payable', 'INR'),
               ('gateway_clearing', 'INR'), ('promotions', 'INR'), ('chips_issuance', 'CHP'),
               ('adjustments', 'INR')) AS v(code, cur);
INSERT INTO wallets_player (external_id, created_at)
SELECT 'bench-' || p, now() FROM generate_series(1, %(players)s) AS p;
INSERT INTO wallets_account (kind, code, player_id, bucket, balance, balance_currency, created_at)
SELECT 'player', 'player:' || pl.external_id || ':' || b.bucket, pl.id, b.bucket, 0, b.cur, now()
  FROM wallets_player pl
 CROSS JOIN (VALUES ('deposit', 'INR'), ('winnings', 'INR'), ('bonus', 'INR'), ('chips', 'CHP'))
       AS b(bucket, cur);

SET session_replication_role = origin;
"""

# One period's transfers, entries and games, dated in the `days` days before %(end)s, ids after
# %(offset)s (transfers) and %(goffset)s (games).
LEDGER = """
SET session_replication_role = replica;
DROP TABLE IF EXISTS seed, gseed;
CREATE TEMP TABLE seed AS
SELECT i,
       CASE WHEN i %% 10 < 6 THEN 'deposit' WHEN i %% 10 < 7 THEN 'chips_grant'
            ELSE 'settlement' END AS kind,
       1 + ((i / 10) %% %(players)s) AS p,
       %(end)s::timestamptz - (((i %% %(days)s) + 1) || ' days')::interval
           + ((i %% 86400) || ' seconds')::interval AS at
  FROM generate_series(%(offset)s + 1, %(offset)s + %(transfers)s) AS i;

INSERT INTO wallets_transfer (id, kind, reference, idempotency_key, content_hash, memo, created_at)
SELECT i, kind, kind || '-' || i, 'bench:' || i, '', '', at FROM seed;

-- Deposits: clearing -> deposit bucket (100.00 .. 199.00). Chips: issuance -> chips bucket.
-- Settlements: a small fee (0.50) from the deposit bucket to the fee account; every player
-- deposits far more than their fees, so no cached balance goes below zero.
INSERT INTO wallets_entry (transfer_id, account_id, amount, amount_currency, created_at)
SELECT s.i, leg.account_id, leg.amount, leg.cur, s.at
  FROM seed s
  JOIN wallets_player pl ON pl.external_id = 'bench-' || s.p
  JOIN wallets_account pd ON pd.player_id = pl.id AND pd.bucket = 'deposit'
  JOIN wallets_account pc ON pc.player_id = pl.id AND pc.bucket = 'chips'
 CROSS JOIN LATERAL (
    SELECT * FROM (VALUES
        ((SELECT id FROM wallets_account WHERE code = 'platform:gateway_clearing'),
         -(100 + s.i %% 100)::numeric, 'INR', 'deposit'),
        (pd.id, (100 + s.i %% 100)::numeric, 'INR', 'deposit'),
        ((SELECT id FROM wallets_account WHERE code = 'platform:chips_issuance'),
         -1000::numeric, 'CHP', 'chips_grant'),
        (pc.id, 1000::numeric, 'CHP', 'chips_grant'),
        (pd.id, -0.50, 'INR', 'settlement'),
        ((SELECT id FROM wallets_account WHERE code = 'platform:fee_revenue'), 0.50, 'INR',
         'settlement')
    ) AS v(account_id, amount, cur, kind)
    WHERE v.kind = s.kind
 ) AS leg
 ORDER BY s.i;

-- Games: finished pool games of four seats, stake 50 each into the game's escrow, 180 to the
-- winner's winnings, 20 fee; 6 transfers and 12 entries per game, like the real settlement.
INSERT INTO wallets_account (kind, code, bucket, balance, balance_currency, created_at)
SELECT 'escrow', 'escrow:bench:' || g, '', 0, 'INR', now()
  FROM generate_series(%(goffset)s + 1, %(goffset)s + %(games)s) g;
CREATE TEMP TABLE gseed AS
SELECT g, a.id AS escrow_id,
       %(end)s::timestamptz - (((g %% %(days)s) + 1) || ' days')::interval
           + ((g %% 86400) || ' seconds')::interval AS at
  FROM generate_series(%(goffset)s + 1, %(goffset)s + %(games)s) AS g
  JOIN wallets_account a ON a.code = 'escrow:bench:' || g;
INSERT INTO tournaments_game
    (client_id, game_id, template_id, escrow_id, format, currency, terms, status, deals_played,
     collected, paid_out, refunded, fee, outcome, created_at, finished_at)
SELECT %(client)s, 'bench-' || g, %(template)s, escrow_id, 'pool101', 'INR', '{}'::jsonb,
       'finished', 3, 200, 180, 0, 20, 'won', at, at
  FROM gseed;
INSERT INTO wallets_transfer (id, kind, reference, idempotency_key, content_hash, memo, created_at)
SELECT %(offset)s + %(transfers)s + (s.g - %(goffset)s - 1) * 6 + k,
       CASE WHEN k <= 4 THEN 'entry' ELSE 'settlement' END,
       'game:' || gm.id, 'bench:game:' || s.g || ':' || k, '', '', s.at
  FROM gseed s JOIN tournaments_game gm ON gm.escrow_id = s.escrow_id
 CROSS JOIN generate_series(1, 6) AS k;
INSERT INTO wallets_entry (transfer_id, account_id, amount, amount_currency, created_at)
SELECT %(offset)s + %(transfers)s + (s.g - %(goffset)s - 1) * 6 + k, v.account_id, v.amount,
       'INR', s.at
  FROM gseed s
 CROSS JOIN generate_series(1, 6) AS k
  JOIN wallets_player pl
    ON pl.external_id = 'bench-' || (((s.g * 4 + least(k, 4)) %% %(players)s) + 1)
  JOIN wallets_account pd ON pd.player_id = pl.id AND pd.bucket = 'deposit'
  JOIN wallets_account pw ON pw.player_id = pl.id AND pw.bucket = 'winnings'
 CROSS JOIN LATERAL (
    SELECT * FROM (VALUES
        (1, pd.id, -50::numeric), (1, s.escrow_id, 50::numeric),
        (5, s.escrow_id, -180::numeric), (5, pw.id, 180::numeric),
        (6, s.escrow_id, -20::numeric),
        (6, (SELECT id FROM wallets_account WHERE code = 'platform:fee_revenue'), 20::numeric)
    ) AS v(kk, account_id, amount)
    WHERE v.kk = CASE WHEN k <= 4 THEN 1 ELSE k END
 ) AS v
 ORDER BY 1;

SELECT setval(pg_get_serial_sequence('wallets_transfer', 'id'),
              (SELECT max(id) FROM wallets_transfer));
SET session_replication_role = origin;
"""

BALANCES = """
UPDATE wallets_account a SET balance = s.total
  FROM (SELECT account_id, sum(amount) AS total FROM wallets_entry GROUP BY account_id) s
 WHERE s.account_id = a.id AND a.kind <> 'platform';
"""

STATEMENT = """
SET session_replication_role = replica;
-- A gateway statement for one day, matching that day's deposits exactly.
INSERT INTO wallets_gatewaystatement
    (name, sha256, imported_at, period_start, period_end, line_count)
SELECT 'bench', 'bench', now(), d, d, 0
  FROM (SELECT ((now() - interval '3 days') AT TIME ZONE %(tz)s)::date AS d) AS day;
INSERT INTO wallets_gatewaystatementline (statement_id, reference, kind, amount, currency, date)
SELECT st.id, t.reference, 'deposit', (100 + t.id %% 100)::numeric, 'INR', st.period_start
  FROM wallets_transfer t, wallets_gatewaystatement st
 WHERE t.kind = 'deposit'
   AND (t.created_at AT TIME ZONE %(tz)s)::date = st.period_start;
UPDATE wallets_gatewaystatement
   SET line_count = (SELECT count(*) FROM wallets_gatewaystatementline);
SET session_replication_role = origin;
"""

BASELINE = "SELECT account_id, sum(amount) FROM wallets_entry GROUP BY account_id"


def seed_setup(players: int) -> dict:
    """The platform accounts, the players and their accounts; the params every period shares."""
    client = ApiClient.objects.create(name="bench", key_prefix="bench", key_hash="-", scopes=[])
    template = GameTemplate.objects.create(
        slug="bench-pool101", format="pool101", entry_fee=Decimal("50.00"), fee_percent=10
    )
    params = {
        "players": players,
        "client": client.pk,
        "template": template.pk,
        "tz": settings.TIME_ZONE,
    }
    with connection.cursor() as cursor:
        cursor.execute(SETUP, params)
    return params


def seed_period(params: dict, entries: int, *, end: datetime, days: int) -> dict:
    """Half the entries from deposits, chips and fees, half from settled games, dated in the
    `days` days before `end` (their months' partitions made first), then the cached balances."""
    transfers, games = entries // 4, entries // 24
    first = Month.of(end - timedelta(days=days))
    for month in months_between(first, Month.of(end)):
        entry_partition_ensure(month)
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(max(id), 0) FROM wallets_transfer")
        (offset,) = cursor.fetchone()
        cursor.execute("SELECT count(*) FROM tournaments_game")
        (goffset,) = cursor.fetchone()
        period = {**params, "transfers": transfers, "games": games, "end": end, "days": days}
        cursor.execute(LEDGER, {**period, "offset": offset, "goffset": goffset})
        cursor.execute(BALANCES)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    return {
        "transfers": transfers + games * 6,
        "games": games,
        "seed_s": round(time.perf_counter() - started, 2),
    }


def seed(entries: int, *, days: int = 30) -> dict:
    """ENTRIES entries over the last `days` days, and a gateway statement for one day."""
    transfers = entries // 4
    players = max(100, min(entries // 50, transfers // 10))  # every player gets deposits
    params = seed_setup(players)
    figures = seed_period(params, entries, end=timezone.now(), days=days)
    with connection.cursor() as cursor:
        cursor.execute(STATEMENT, params)
        cursor.execute("SELECT count(*) FROM wallets_entry")
        (count,) = cursor.fetchone()
        cursor.execute("SELECT count(*) FROM wallets_gatewaystatementline")
        (lines,) = cursor.fetchone()
    return {
        **figures,
        "entries": count,
        "players": players,
        "accounts": players * 4 + 7 + figures["games"],
        "statement_lines": lines,
    }


def time_baseline() -> float:
    with connection.cursor() as cursor:
        t0 = time.perf_counter()
        cursor.execute(BASELINE)
        cursor.fetchall()
        return time.perf_counter() - t0


def time_reconcile() -> tuple[float, ReconciliationReport]:
    t0 = time.perf_counter()
    report = reconcile_run(trigger=ReconciliationReport.Trigger.COMMAND)
    return time.perf_counter() - t0, report


PLANTED_KINDS = {
    "cached_balance",
    "unbalanced_transfer",
    "currency_total",
    "foreign_currency",
    "game_unbalanced",
}

PLANT = """
SET session_replication_role = replica;
UPDATE wallets_account SET balance = balance + 1
 WHERE id = (SELECT min(id) FROM wallets_account WHERE kind = 'player');
DELETE FROM wallets_entry WHERE id = (SELECT max(id) FROM wallets_entry);
UPDATE wallets_entry SET amount_currency = 'CHP'
 WHERE id = (SELECT min(id) FROM wallets_entry WHERE amount_currency = 'INR');
UPDATE tournaments_game SET fee = fee + 1 WHERE id = (SELECT min(id) FROM tournaments_game);
SET session_replication_role = origin;
"""


def time_planted() -> tuple[float, list[str]]:
    """Tamper behind the app's back, reconcile once (the exact per-transfer path runs too)."""
    with connection.cursor() as cursor:
        cursor.execute(PLANT)
    elapsed, report = time_reconcile()
    kinds = sorted(set(report.discrepancies.values_list("kind", flat=True)))
    return elapsed, kinds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--history-entries", type=int, help="with --open-entries: closes' mode")
    parser.add_argument("--open-entries", type=int)
    args = parser.parse_args()

    recreate_database()
    call_command("migrate", verbosity=0)
    if args.history_entries is not None or args.open_entries is not None:
        history_main(args.history_entries or 0, args.open_entries or 0, runs=args.runs)
        return
    figures = seed(args.entries)
    print(f"seeded {figures['entries']:,} entries in {figures['seed_s']} s", flush=True)

    time_baseline()  # warm-up: the table in shared buffers / page cache for both
    time_reconcile()
    baselines, reconciles, report = [], [], None
    for _ in range(args.runs):
        baselines.append(time_baseline())
        elapsed, report = time_reconcile()
        reconciles.append(elapsed)
    baseline = statistics.median(baselines)
    reconcile = statistics.median(reconciles)
    ratio = reconcile / baseline
    planted_s, planted = time_planted()
    print(f"baseline GROUP BY account_id: {baseline:.3f} s (median of {args.runs})")
    print(f"reconciliation:               {reconcile:.3f} s, status {report.status}")
    for name, check in report.stats["checks"].items():
        print(f"  {name}: {check['seconds']} s, {check['found']} found")
    print(f"ratio {ratio:.2f} (goal <= {GOAL_RATIO})")
    print(f"with planted discrepancies: {planted_s:.3f} s, found {planted}")
    result = {
        **figures,
        "baseline_s": round(baseline, 4),
        "baseline_runs_s": [round(b, 4) for b in baselines],
        "reconcile_s": round(reconcile, 4),
        "reconcile_runs_s": [round(r, 4) for r in reconciles],
        "ratio": round(ratio, 3),
        "goal_ratio": GOAL_RATIO,
        "meets_goal": ratio <= GOAL_RATIO,
        "report_status": report.status,
        "discrepancies": report.discrepancy_count,
        "checks_s": {name: c["seconds"] for name, c in report.stats["checks"].items()},
        "work_mem": settings.RECONCILE_WORK_MEM,
        "planted_reconcile_s": round(planted_s, 4),
        "planted_found": planted,
        "planted_found_all": set(planted) >= PLANTED_KINDS,
    }
    print(json.dumps(result))


def reconcile_alternated(
    runs: int,
) -> dict[str, tuple[float, list[float], dict, ReconciliationReport]]:
    """Reconcile the open month's copy and the database with history in turn, RUNS times each
    after a warm-up of each: a machine slowing down or speeding up meanwhile weighs on both
    alike. Each one's median, its timings, each check's median seconds and the last report."""
    timings: dict[str, list[float]] = {OPEN_DB_NAME: [], DB_NAME: []}
    checks: dict[str, dict[str, list[float]]] = {name: {} for name in timings}
    last = {}
    for run in range(runs + 1):
        for name in timings:
            database_use(name)
            elapsed, report = time_reconcile()
            last[name] = report
            if run:  # the first of each is the warm-up
                timings[name].append(elapsed)
                for check, figures in report.stats["checks"].items():
                    checks[name].setdefault(check, []).append(figures["seconds"])
    return {
        name: (
            statistics.median(t),
            t,
            {check: statistics.median(s) for check, s in checks[name].items()},
            last[name],
        )
        for name, t in timings.items()
    }


def open_month_seed(params: dict, entries: int, *, now: datetime) -> dict:
    """ENTRIES entries in this month up to `now`, and a gateway statement for one of its days."""
    days = max(1, (now - Month.of(now).start).days)
    opened = seed_period(params, entries, end=now, days=days)
    with connection.cursor() as cursor:
        cursor.execute(STATEMENT, params)
        cursor.execute("ANALYZE")  # the statement's lines, as autovacuum would
    return opened


def settle() -> None:
    """What the server does within minutes of a bulk write, long before the night, done before
    the timing starts: the checkpoint and the kernel's writeback of the gigabytes just written
    (seed_period has run autovacuum's VACUUM ANALYZE). Left to run meanwhile, they slowed
    whichever database was being reconciled (the one pass 0.52 -> 0.80 s on the first runs,
    0.55 -> 0.68 s on the same databases minutes later)."""
    with connection.cursor() as cursor:
        cursor.execute("CHECKPOINT")
    os.sync()


def months_close(months: list[Month]) -> list[float]:
    """Close each month, oldest first, as two people; the seconds each close took."""
    operator = User.objects.create_user("bench-operator", is_staff=True)
    approver = User.objects.create_user("bench-approver", is_staff=True)
    operator.groups.add(Group.objects.get(name=OPERATOR))
    approver.groups.add(Group.objects.get(name=APPROVER))
    timings = []
    for month in months:
        proposed = month_close_propose(proposed_by=operator, month=month.name, reason="bench")
        t0 = time.perf_counter()
        proposal_decide(
            model=MonthClose, proposal_id=proposed.pk, decided_by=approver, approve=True
        )
        timings.append(round(time.perf_counter() - t0, 2))
    return timings


def history_main(history: int, open_entries: int, *, runs: int) -> None:
    """Reconciliation over OPEN entries alone, and with HISTORY entries spread over the six
    closed months before this one: the nightly run must cost about the same. The players are
    seeded once and copied to a database of their own, which then gets the open month alone;
    the first gets history, its closes, then the same open month (in that order, as time has
    it: the open month's accounts and games are the newest, as in service). The two are then
    reconciled in turn."""
    now = timezone.now()
    this = Month.of(now)
    players = max(100, min(open_entries // 50, open_entries // 40))
    params = seed_setup(players)
    database_copy(OPEN_DB_NAME)

    first = this.next(-6)
    closed = seed_period(params, history, end=this.start, days=(this.start - first.start).days)
    print(
        f"seeded {history:,} entries over {first}..{this.previous()} in {closed['seed_s']} s",
        flush=True,
    )
    close_s = months_close(months_between(first, this.previous()))
    print(f"closed six months: {close_s} s", flush=True)
    for name in (DB_NAME, OPEN_DB_NAME):
        database_use(name)
        opened = open_month_seed(params, open_entries, now=now)
        print(f"seeded {open_entries:,} open entries in {name} in {opened['seed_s']} s", flush=True)
    settle()
    medians = reconcile_alternated(runs)
    open_only, open_runs, open_checks, open_report = medians[OPEN_DB_NAME]
    with_history, history_runs, checks, report = medians[DB_NAME]
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM wallets_entry")
        (entries,) = cursor.fetchone()
    ratio = with_history / open_only
    print(f"each check's median, open month alone -> with history (s), {runs} runs each:")
    for name, seconds in checks.items():
        print(f"  {name}: {open_checks.get(name, 0):.3f} -> {seconds:.3f}")
    print(f"open month alone: reconcile {open_only:.3f} s, {open_report.status}")
    print(
        f"with history: reconcile {with_history:.3f} s, {report.status}; ratio {ratio:.2f} "
        f"(goal <= {GOAL_HISTORY_RATIO})"
    )
    print(
        json.dumps(
            {
                "history_entries": history,
                "open_entries": open_entries,
                "entries": entries,
                "players": players,
                "seed_open_s": opened["seed_s"],
                "seed_history_s": closed["seed_s"],
                "close_s": close_s,
                "open_only_s": round(open_only, 4),
                "open_only_runs_s": [round(t, 4) for t in open_runs],
                "open_only_status": open_report.status,
                "open_only_checks_s": open_checks,
                "reconcile_s": round(with_history, 4),
                "reconcile_runs_s": [round(t, 4) for t in history_runs],
                "report_status": report.status,
                "entries_read": report.stats.get("entries"),
                "ratio": round(ratio, 3),
                "goal_ratio": GOAL_HISTORY_RATIO,
                "meets_goal": ratio <= GOAL_HISTORY_RATIO,
                "checks_s": checks,
            }
        )
    )


if __name__ == "__main__":
    main()
