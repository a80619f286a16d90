"""Deposit limits under real concurrency: 20 deposits at once over the REST API (threads, each
with its own database connection) against one limit; the total accepted never passes it."""

import uuid
from collections import Counter
from decimal import Decimal

import pytest
from django.db.models import Sum
from rest_framework.test import APIClient

from rummy_ledger.api.keys import api_client_create
from tests.concurrency import run_in_threads
from tests.wallets.invariants import ledger_violations
from wallets.models import Entry
from wallets.services.protection import limits_set

pytestmark = pytest.mark.django_db(transaction=True)


def gateway_credentials() -> str:
    _, key = api_client_create(name=f"gateway-{uuid.uuid4().hex[:6]}", scopes=["payments"])
    return f"Api-Key {key}"


def deposited(player: str) -> Decimal:
    paid = Entry.objects.filter(
        transfer__kind="deposit",
        transfer__entries__account__code=f"player:{player}:deposit",
        amount__lt=0,
    )
    return -(paid.aggregate(total=Sum("amount"))["total"] or Decimal(0))


@pytest.mark.parametrize(("limit", "amount"), [("1000.00", "150.00"), ("500.00", "100.00")])
def test_twenty_concurrent_deposits_never_pass_the_daily_limit(limit, amount):
    limits_set(
        player_external_id="racer",
        daily_limit=Decimal(limit),
        monthly_limit=None,
        changed_by="test",
    )
    credentials = gateway_credentials()

    def work(n: int):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=credentials)
        response = client.post(
            "/api/v1/players/racer/deposits",
            {"amount": amount, "reference": f"race-{n}"},
            format="json",
        )
        return response.status_code, response.json().get("error", {}).get("code")

    results = run_in_threads(work, 20)

    assert [r for r in results if isinstance(r, Exception)] == []
    outcome = Counter(results)
    assert set(outcome) <= {(201, None), (409, "deposit_limit"), (409, "ledger_busy")}, outcome
    accepted = outcome[(201, None)]
    assert accepted * Decimal(amount) == deposited("racer") <= Decimal(limit)
    # every deposit that was refused for the limit saw the limit reached: none was lost to a race
    assert (
        accepted == min(20, int(Decimal(limit) // Decimal(amount))) or outcome[(409, "ledger_busy")]
    )
    assert ledger_violations() == []
