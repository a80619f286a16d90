"""Real concurrent connections against PostgreSQL: no double spend, no deadlock, no lost money."""

import random
import threading
from collections import Counter
from decimal import Decimal

import pytest
from django.db import connection, transaction
from djmoney.money import Money

from tests.builders import funded_player, move
from tests.concurrency import run_in_threads
from tests.wallets.invariants import ledger_violations
from wallets.errors import InsufficientFunds, LedgerBusy
from wallets.models import CASH, Account, Transfer
from wallets.services.accounts import platform_accounts
from wallets.services.transfers import Leg, balance, transfer_post

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = 8
TRANSFERS_PER_THREAD = 60


def test_many_connections_moving_money_between_few_wallets():
    # given: four wallets of 50.00 and the fee sink every transfer may also credit
    wallets = [funded_player(f"p{n}", "50.00")["deposit"] for n in range(4)]
    fee = platform_accounts()["fee_revenue"]
    total_before = sum(balance(account=w).amount for w in wallets)

    def work(thread: int) -> Counter:
        rng = random.Random(thread)
        outcome: Counter = Counter()
        for n in range(TRANSFERS_PER_THREAD):
            source, target = rng.sample(wallets, 2)
            amount = Money(Decimal(rng.randint(2, 2500)) / 100, CASH)  # often more than is left
            cut = Money("0.01", CASH)
            try:
                transfer_post(
                    kind="transfer",
                    reference="stress",
                    idempotency_key=f"stress-{thread}-{n}",
                    legs=[Leg(source.pk, -amount), Leg(target.pk, amount - cut), Leg(fee.pk, cut)],
                )
                outcome["posted"] += 1
            except InsufficientFunds:
                outcome["short"] += 1
            except LedgerBusy:
                outcome["busy"] += 1
        return outcome

    # when
    results = run_in_threads(work, THREADS)

    # then: no thread crashed, no lock wait expired and no deadlock was reported
    assert [r for r in results if not isinstance(r, Counter)] == []
    totals = sum(results, Counter())
    assert totals["busy"] == 0
    assert totals["posted"] + totals["short"] == THREADS * TRANSFERS_PER_THREAD
    assert totals["short"] > 0, "the test should include transfers that fail for lack of funds"
    # nothing lost or doubled: each posted transfer is there once, money only moved around
    assert Transfer.objects.filter(reference="stress").count() == totals["posted"]
    wallet_total = sum(Account.objects.get(pk=w.pk).balance.amount for w in wallets)
    assert wallet_total + balance(account=fee).amount == total_before
    assert balance(account=fee).amount == Decimal("0.01") * totals["posted"]
    assert ledger_violations() == []


def test_same_idempotency_key_from_many_connections_creates_one_transfer():
    alice, bob = funded_player("alice", "100.00"), funded_player("bob", "0")

    def work(_thread: int):
        return move(alice["deposit"], bob["deposit"], "30", "the-same-key")

    results = run_in_threads(work, THREADS)

    assert all(not isinstance(r, Exception) for r in results), results
    assert len({r.transfer_id for r in results}) == 1
    assert sum(r.created for r in results) == 1
    assert Transfer.objects.filter(idempotency_key="the-same-key").count() == 1
    assert balance(account=bob["deposit"]) == Money("30.00", CASH)
    assert ledger_violations() == []


def test_opposite_transfers_lock_in_one_order_and_never_deadlock():
    a, b = funded_player("a", "1000.00")["deposit"], funded_player("b", "1000.00")["deposit"]

    def work(thread: int):
        source, target = (a, b) if thread % 2 else (b, a)
        for n in range(40):
            move(source, target, "1", f"swap-{thread}-{n}")

    results = run_in_threads(work, THREADS)

    assert results == [None] * THREADS
    assert balance(account=a) + balance(account=b) == Money("2000.00", CASH)
    assert ledger_violations() == []


def test_a_held_lock_becomes_a_retryable_error_after_the_bounded_wait(settings):
    settings.LEDGER_LOCK_TIMEOUT_MS = 200
    alice, bob = funded_player("alice", "100.00"), funded_player("bob", "0")
    locked, release = threading.Event(), threading.Event()

    def hold_lock() -> None:
        with transaction.atomic():
            Account.objects.select_for_update().get(pk=alice["deposit"].pk)
            locked.set()
            release.wait(10)
        connection.close()

    holder = threading.Thread(target=hold_lock)
    holder.start()
    try:
        locked.wait(10)
        with pytest.raises(LedgerBusy) as busy:
            move(alice["deposit"], bob["deposit"], "1", "blocked")
    finally:
        release.set()
        holder.join()
    assert busy.value.status == 409 and busy.value.retry_after >= 1
    assert not Transfer.objects.filter(reference="blocked").exists()
