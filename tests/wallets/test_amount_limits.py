"""Amounts at the edge of what the ledger holds: a per-transfer maximum in
the ledger function itself, a balance that would overflow its column refused with a 4xx, and a
reconciliation that works for any amount the columns can hold."""

from decimal import Decimal

import pytest
from django.db import DatabaseError, connection, transaction
from djmoney.money import Money

from tests.builders import deposit_for_credit, funded_player, make_api, tamper
from tests.finance.test_reconciliation import kinds
from wallets.errors import AmountOverLimit, BalanceOutOfRange
from wallets.models import CASH, Entry, ReconciliationReport, Transfer
from wallets.reconciliation import reconcile_run
from wallets.reconciliation.entries import _is_prime, random_prime
from wallets.services.deposits import deposit_register
from wallets.services.transfers import Leg, transfer_post
from wallets.tax.formulas import gst_split
from wallets.tax.gst_rates import gst_rate_now

pytestmark = pytest.mark.django_db

COLUMN_MAX = Decimal("9999999999999999.99")  # numeric(18,2)


def test_the_ledger_function_refuses_an_entry_above_the_maximum(settings):
    a, b = funded_player("a", "100.00"), funded_player("b", "0")
    settings.LEDGER_MAX_TRANSFER = Decimal("100.00")
    with pytest.raises(AmountOverLimit) as refused, transaction.atomic():
        transfer_post(
            kind="transfer",
            reference="big",
            idempotency_key="big",
            legs=[
                Leg(a["deposit"].pk, -Money("100.01", CASH)),
                Leg(b["deposit"].pk, Money("100.01", CASH)),
            ],
        )
    assert refused.value.status == 400 and refused.value.code == "amount_over_limit"
    assert not Transfer.objects.filter(reference="big").exists()


def test_the_maximum_is_enforced_in_sql_not_only_in_python():
    with (
        pytest.raises(DatabaseError) as refused,
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(
            "SELECT * FROM ledger_post_batch(ARRAY['k'], ARRAY['transfer'], ARRAY['r'], ARRAY['h'],"
            " ARRAY[NULL]::bigint[], ARRAY[''], ARRAY[1, 1], ARRAY[1, 2]::bigint[],"
            " ARRAY[-5, 5]::numeric[], ARRAY['INR', 'INR'], '1s', 4)"
        )
    assert refused.value.__cause__.sqlstate == "RL007"


def test_a_deposit_that_would_overflow_the_balance_is_a_4xx(settings):
    settings.LEDGER_MAX_TRANSFER = COLUMN_MAX
    # a deposit credits 100/(100 + rate) of itself (GST): fill the bucket to a rupee below the
    # column's maximum, then any deposit overflows it
    rate = gst_rate_now()
    deposit_register(player_external_id="whale", amount=Money(COLUMN_MAX, CASH), reference="w1")
    credited = gst_split(COLUMN_MAX, rate_percent=rate).credited
    top_up = deposit_for_credit(COLUMN_MAX - credited - Decimal("1.00"), rate_percent=rate)
    deposit_register(player_external_id="whale", amount=Money(top_up, CASH), reference="w1b")
    with pytest.raises(BalanceOutOfRange), transaction.atomic():
        deposit_register(player_external_id="whale", amount=Money("2.00", CASH), reference="w2")

    api = make_api("payments", name="gateway")[0]
    api.raise_request_exception = False
    response = api.post(
        "/api/v1/players/whale/deposits", {"amount": "2.00", "reference": "w3"}, format="json"
    )
    assert response.status_code == 422, response.content
    assert response.json()["error"]["code"] == "balance_out_of_range"
    assert Transfer.objects.filter(kind="deposit").count() == 2


def test_reconciliation_works_for_any_amount_the_columns_hold(settings):
    settings.LEDGER_MAX_TRANSFER = COLUMN_MAX
    deposit_register(player_external_id="whale", amount=Money(COLUMN_MAX, CASH), reference="w1")
    funded_player("p1", "100.00")

    report = reconcile_run(trigger="command")  # was: bigint out of range, for good

    assert report.status == ReconciliationReport.Status.CLEAN, list(report.discrepancies.values())
    assert _is_prime(report.stats["transfer_checksum_modulus"])


def test_huge_unbalanced_transfers_that_cancel_out_are_still_found(settings):
    settings.LEDGER_MAX_TRANSFER = COLUMN_MAX
    for n in (1, 2):
        deposit_register(player_external_id=f"p{n}", amount=Money("5.00", CASH), reference=f"d{n}")
    first, second = Entry.objects.filter(account__code="platform:gateway_clearing").order_by("id")
    huge = Decimal("4000000000000000.00")
    # the clearing account (a sink) keeps its total; only the two transfers stop balancing
    tamper("UPDATE wallets_entry SET amount = amount - %s WHERE id = %s", [huge, first.pk])
    tamper("UPDATE wallets_entry SET amount = amount + %s WHERE id = %s", [huge, second.pk])

    report = reconcile_run(trigger="command")

    # (the deposits' GST no longer matches their tampered amounts either: found too)
    assert kinds(report).count("unbalanced_transfer") == 2
    unbalanced = report.discrepancies.filter(kind="unbalanced_transfer")
    found = {d.details["transfer_id"]: d.actual for d in unbalanced}
    assert found == {first.transfer_id: -huge, second.transfer_id: huge}


def test_the_checksum_modulus_is_a_fresh_43_bit_prime():
    primes = {random_prime(43) for _ in range(5)}
    assert len(primes) == 5
    assert all(p.bit_length() == 43 and _is_prime(p) for p in primes)
    assert [n for n in range(100) if _is_prime(n)] == [
        2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83,
        89, 97,
    ]  # fmt: skip
    assert not _is_prime(3215031751)  # a strong pseudoprime to bases 2, 3, 5 and 7
