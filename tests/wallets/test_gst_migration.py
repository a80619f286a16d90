"""Migration 0010 dates the GST rates: deposits recorded before it keep 28 % and their numbers
(a record each, from what the ledger holds), deposits from before GST get none, and the
rates in force so far are seeded."""

from decimal import Decimal

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from djmoney.money import Money

from wallets.models import CASH, DepositGst, GstRate
from wallets.services.deposits import deposit_register

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.soak]

BEFORE = [("wallets", "0009_bonus_protection")]


def test_deposits_recorded_before_keep_28_percent_and_their_numbers():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    Player, Account = old.get_model("wallets", "Player"), old.get_model("wallets", "Account")
    Transfer, Entry = old.get_model("wallets", "Transfer"), old.get_model("wallets", "Entry")

    def account(code: str, **extra):
        return Account.objects.get_or_create(
            code=code, defaults={"balance": 0, "balance_currency": "INR", **extra}
        )[0]

    player = Player.objects.create(external_id="old")
    buckets = {
        b: account(f"player:old:{b}", kind="player", player=player, bucket=b)
        for b in ("deposit", "winnings", "bonus", "pending")
    }
    clearing = account("platform:gateway_clearing", kind="platform")
    gst = account("platform:gst_payable", kind="platform")

    def deposit(reference: str, legs: list) -> int:
        transfer = Transfer.objects.create(
            kind="deposit", reference=reference, idempotency_key=f"deposit:{reference}"
        )
        Entry.objects.bulk_create(
            Entry(transfer=transfer, account=a, amount=Decimal(x), amount_currency="INR")
            for a, x in legs
        )
        return transfer.pk

    before_gst = deposit("gw-pre", [(clearing, "-500.00"), (buckets["deposit"], "500.00")])
    at_28 = deposit(
        "gw-28",
        [(clearing, "-1000.00"), (buckets["deposit"], "781.25"), (gst, "218.75")],
    )
    Account.objects.filter(pk=buckets["deposit"].pk).update(balance=Decimal("1281.25"))

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    records = {d.transfer_id: (d.rate_percent, d.amount, d.gst) for d in DepositGst.objects.all()}
    assert records == {at_28: (Decimal("28.00"), Decimal("1000.00"), Decimal("218.75"))}
    assert before_gst not in records
    assert [(str(r.effective_from), r.rate_percent) for r in GstRate.objects.all()] == [
        ("2023-10-01", Decimal("28.00")),
        ("2025-09-22", Decimal("40.00")),
    ]
    # the gateway sends them again: answered as recorded, at their own rates
    again = deposit_register(
        player_external_id="old", amount=Money("1000.00", CASH), reference="gw-28"
    )
    pre = deposit_register(
        player_external_id="old", amount=Money("500.00", CASH), reference="gw-pre"
    )
    assert (again.created, again.gst_rate, again.gst, again.credited) == (
        False,
        Decimal("28.00"),
        Decimal("218.75"),
        Decimal("781.25"),
    )
    assert (pre.gst_rate, pre.gst) == (Decimal("0.00"), Decimal("0.00"))
