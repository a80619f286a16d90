"""The ledger's side of tests/ops/test_pitr.py, run in a process of its own against a scratch
PostgreSQL cluster (the project's settings with `DATABASE_URL` pointing at it):

    manage.py shell -c "from tests.ops.pitr_ledger import run; run('post', 'before')"

Each call prints one JSON line (the last line of the process's output).
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime

from django.db import connection
from djmoney.money import Money

from wallets.models import CASH, Account, Transfer
from wallets.selectors import account_balances
from wallets.services.accounts import player_accounts
from wallets.services.deposits import deposit_register
from wallets.services.players import player_get_or_create
from wallets.services.transfers import Leg, balance, transfer_post

# phase -> (deposits: player, amount), (moves: from, to, amount): both through the ledger's services
PHASES = {
    "before": (
        [("pitr-alice", "1000.00"), ("pitr-bob", "500.00"), ("pitr-carol", "250.00")],
        [("pitr-alice", "pitr-bob", "10.00")] * 5 + [("pitr-bob", "pitr-carol", "33.33")] * 3,
    ),
    "after": (
        [("pitr-dave", "700.00"), ("pitr-alice", "100.00")],
        [("pitr-bob", "pitr-alice", "7.77")] * 4 + [("pitr-carol", "pitr-dave", "1.01")] * 2,
    ),
}
MARKER = "pitr-marker"


def _deposit_account(external_id: str) -> Account:
    return player_accounts(player=player_get_or_create(external_id=external_id))["deposit"]


def _move(source: str, target: str, amount: str, key: str) -> int:
    legs = [
        Leg(_deposit_account(source).pk, -Money(amount, CASH)),
        Leg(_deposit_account(target).pk, Money(amount, CASH)),
    ]
    return transfer_post(kind="transfer", reference=key, idempotency_key=key, legs=legs).transfer_id


def post(phase: str) -> dict:
    """Deposits and moves, each transfer its own transaction (autocommit)."""
    deposits, moves = PHASES[phase]
    keys = []
    for external_id, amount in deposits:
        reference = f"pitr-{phase}-{external_id}"
        deposit_register(
            player_external_id=external_id, amount=Money(amount, CASH), reference=reference
        )
        keys.append(reference)
    for n, (source, target, amount) in enumerate(moves):
        keys.append(f"pitr-{phase}-{n}")
        _move(source, target, amount, keys[-1])
    return {"transfers": len(keys)}


def marker() -> dict:
    """Commit the marker transfer, then T: the server's clock once it has committed, to the
    millisecond (pgBackRest's `--target` takes no finer). Every transfer committed before T
    began before it (its `created_at` is its transaction's start), and every later one begins
    after it."""
    transfer_id = _move("pitr-carol", "pitr-alice", "1.23", MARKER)
    time.sleep(0.05)
    with connection.cursor() as cursor:
        cursor.execute("SELECT clock_timestamp()")
        (at,) = cursor.fetchone()
    time.sleep(0.05)
    stamp = at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "+00"  # truncated: <= T
    return {"marker": transfer_id, "at": stamp}


def balances(at: str = "") -> dict:
    """Every account's balance: as of `at` (the sum of its entries made until then), or now (as
    its page shows it: the cached balance, or the sum of a platform account's entries); and the
    transfers committed by then, by idempotency key."""
    accounts = list(Account.objects.order_by("code"))
    transfers = Transfer.objects.all()
    if at:
        moment = datetime.fromisoformat(at)
        figures = {a.code: balance(account=a, at=moment) for a in accounts}
        transfers = transfers.filter(created_at__lte=moment)
    else:
        by_id = account_balances(accounts)
        figures = {a.code: by_id[a.pk] for a in accounts}
    return {
        "balances": {code: f"{money.amount} {money.currency}" for code, money in figures.items()},
        "transfers": sorted(transfers.values_list("idempotency_key", flat=True)),
    }


def run(command: str, *args: str) -> None:
    answer = {"post": post, "marker": marker, "balances": balances}[command](*args)
    print(json.dumps(answer), flush=True)
