"""The wind-down's speed, against the ledger's single-transfer rate measured in the same run.

1. Seed PLAYERS funded, KYC-verified players in one set-based SQL pass (each: 1,000 credited to
   the deposit bucket by a deposit transfer, 250 won into winnings), on a database of its own.
2. The baseline: the ledger's single-transfer rate, one process posting two-leg transfers, one
   per database transaction (`transfers_post`), for SECONDS.
3. Real money off, a wind-down proposed and approved, then `wind_down_run` over every player
   (one process, as `manage.py wind_down` runs): each player gets a refund withdrawal with its
   Rule 133 TDS, approved at once.
Prints players/s and its ratio to the single-transfer rate; the last line is one JSON object.

Run: `.venv/bin/python bench/wind_down.py [--players 100000] [--seconds 10]` (drops and makes
its own database `bench_wind_down` on the embedded server, or DATABASE_URL's server if set).
"""

import argparse
import json
import os
import random
import sys
import time
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rummy_ledger.settings")
os.environ.setdefault("EMBEDDED_DATABASE_NAME", "bench_wind_down")
os.environ.setdefault("LOG_LEVEL", "WARNING")
os.environ["WIND_DOWN_GRACE_MINUTES"] = "0"

from bench.startup import django_start  # noqa: E402

django_start()

from django.conf import settings  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from djmoney.money import Money  # noqa: E402

from rummy_ledger.api.keys import api_client_create  # noqa: E402
from rummy_ledger.api.models import ApiClient  # noqa: E402
from wallets.models import CASH, WindDown  # noqa: E402
from wallets.roles import APPROVER, OPERATOR, roles_ensure  # noqa: E402
from wallets.services.accounts import platform_accounts  # noqa: E402
from wallets.services.proposals import proposal_decide  # noqa: E402
from wallets.services.transfers import Leg, TransferRequest, transfers_post  # noqa: E402
from wallets.services.wind_down import wind_down_propose, wind_down_run  # noqa: E402

# One pass of set-based SQL: players (verified, a unique PAN each), their five accounts, a
# deposit and a win each, posted as balanced transfers with their entries and balances.
SEED = """
INSERT INTO wallets_player (external_id, created_at, kyc_status, pan, region)
SELECT 'wd-' || n, now(), 'verified',
       'AB' || chr(65 + n / 67600 %% 26) || chr(65 + n / 2600 %% 26) || chr(65 + n / 100 %% 26)
            || lpad((n %% 100)::text, 2, '0') || '00F', ''
  FROM generate_series(0, %(players)s - 1) AS n;
INSERT INTO wallets_account (kind, code, player_id, bucket, balance, balance_currency, created_at)
SELECT 'player', 'player:' || p.external_id || ':' || b.bucket, p.id, b.bucket,
       CASE b.bucket WHEN 'deposit' THEN 1000 WHEN 'winnings' THEN 250 ELSE 0 END,
       CASE b.bucket WHEN 'chips' THEN 'CHP' ELSE 'INR' END, now()
  FROM wallets_player p
 CROSS JOIN (VALUES ('deposit'), ('winnings'), ('bonus'), ('chips'), ('pending')) AS b(bucket)
 WHERE p.external_id LIKE 'wd-%%';
INSERT INTO wallets_transfer (kind, reference, idempotency_key, content_hash, memo, created_at)
SELECT k.kind, 'seed-' || k.kind || '-' || p.external_id,
       'seed-' || k.kind || '-' || p.external_id, '', '', now()
  FROM wallets_player p CROSS JOIN (VALUES ('deposit'), ('settlement')) AS k(kind)
 WHERE p.external_id LIKE 'wd-%%';
INSERT INTO wallets_entry (transfer_id, account_id, amount, amount_currency, created_at)
SELECT t.id, a.id, x.amount, 'INR', now()
  FROM wallets_player p
  JOIN wallets_transfer t ON t.reference IN ('seed-deposit-' || p.external_id,
                                             'seed-settlement-' || p.external_id)
  CROSS JOIN LATERAL (VALUES
      (CASE WHEN t.kind = 'deposit' THEN %(clearing)s ELSE %(adjustments)s END,
       CASE WHEN t.kind = 'deposit' THEN -1000 ELSE -250 END),
      ((SELECT id FROM wallets_account
         WHERE code = 'player:' || p.external_id || ':'
                      || CASE WHEN t.kind = 'deposit' THEN 'deposit' ELSE 'winnings' END),
       CASE WHEN t.kind = 'deposit' THEN 1000 ELSE 250 END)) AS x(account_id, amount)
  JOIN wallets_account a ON a.id = x.account_id
 WHERE p.external_id LIKE 'wd-%%';
"""


def fresh_database() -> None:
    call_command("migrate", verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE wallets_winddownline, wallets_winddown, wallets_withdrawal, "
            "wallets_depositgst, wallets_entry, wallets_transfer, wallets_account, "
            "wallets_kycrecord, wallets_player CASCADE"
        )


def seed(players: int) -> float:
    started = time.perf_counter()
    platform = platform_accounts()
    with connection.cursor() as cursor:
        cursor.execute(
            SEED,
            {
                "players": players,
                "clearing": platform["gateway_clearing"].pk,
                "adjustments": platform["adjustments"].pk,
            },
        )
        cursor.execute("ANALYZE")
    return time.perf_counter() - started


def single_transfer_rate(seconds: float) -> float:
    """The ledger's baseline: one two-leg transfer per database transaction, one process."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM wallets_account WHERE bucket = 'deposit' ORDER BY id LIMIT 1000"
        )
        accounts = [row[0] for row in cursor.fetchall()]
    rng, one = random.Random(1), Money(Decimal("0.01"), CASH)
    done, deadline, started = 0, time.perf_counter() + seconds, time.perf_counter()
    while time.perf_counter() < deadline:
        source, target = rng.sample(accounts, 2)
        transfers_post(
            requests=[
                TransferRequest(
                    kind="transfer",
                    reference="bench",
                    idempotency_key=f"bench-{started}-{done}",
                    legs=[Leg(source, -one), Leg(target, one)],
                )
            ]
        )
        done += 1
    return done / (time.perf_counter() - started)


def approved_wind_down() -> WindDown:
    roles_ensure()
    operator = User.objects.create_user("bench-op", is_staff=True)
    approver = User.objects.create_user("bench-ap", is_staff=True)
    from django.contrib.auth.models import Group

    operator.groups.add(Group.objects.get(name=OPERATOR))
    approver.groups.add(Group.objects.get(name=APPROVER))
    operator, approver = User.objects.get(pk=operator.pk), User.objects.get(pk=approver.pk)
    proposed = wind_down_propose(proposed_by=operator, reason="bench")
    return proposal_decide(
        model=WindDown, proposal_id=proposed.pk, decided_by=approver, approve=True
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--players", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=10)
    args = parser.parse_args()
    fresh_database()
    seeded_in = seed(args.players)
    print(f"seeded {args.players:,} funded players in {seeded_in:.1f} s")
    baseline = single_transfer_rate(args.seconds)
    print(f"ledger single-transfer rate, 1 process: {baseline:,.0f} transfers/s (baseline)")

    settings.REAL_MONEY = "off"
    User.objects.filter(username__startswith="bench-").delete()
    wind_down = approved_wind_down()
    if not ApiClient.objects.filter(name="bench-gateway").exists():
        api_client_create(name="bench-gateway", scopes=["payments"])
    client = ApiClient.objects.get(name="bench-gateway")
    started = time.perf_counter()
    run = wind_down_run(wind_down=wind_down, client=client)
    elapsed = time.perf_counter() - started
    rate = run.players / elapsed
    print(run.summary())
    print(f"wind-down: {run.players:,} players in {elapsed:.1f} s = {rate:,.1f} players/s")
    print(f"ratio to the single-transfer rate: {rate / baseline:.3f}")
    print(
        json.dumps(
            {
                "players": run.players,
                "seconds": round(elapsed, 2),
                "players_per_s": round(rate, 1),
                "single_transfer_per_s": round(baseline, 1),
                "ratio": round(rate / baseline, 4),
                "refunds": run.refunds,
                "tds": str(run.tds),
            }
        )
    )


if __name__ == "__main__":
    main()
