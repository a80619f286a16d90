"""Property: any sequence of postings keeps every ledger invariant and matches a simple model."""

from decimal import Decimal

import pytest
from django.db import transaction
from djmoney.money import Money
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import move
from tests.wallets.invariants import ledger_violations
from wallets.errors import InsufficientFunds
from wallets.models import CASH, Account
from wallets.services.accounts import platform_accounts, player_accounts
from wallets.services.players import player_get_or_create
from wallets.services.transfers import Leg, transfer_post

amounts = st.decimals(min_value=Decimal("0.01"), max_value=Decimal("300"), places=2)
operation = st.tuples(st.integers(0, 5), st.integers(0, 5), amounts, amounts)


@pytest.mark.django_db
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations=st.lists(operation, min_size=1, max_size=25))
def test_any_sequence_of_postings_keeps_the_invariants(operations):
    with transaction.atomic():
        players = [player_get_or_create(external_id=f"prop-{n}") for n in range(3)]
        wallets = [
            acct for p in players for b, acct in player_accounts(player=p).items() if b != "chips"
        ]
        sink = platform_accounts()["promotions"]
        model = {w.pk: Account.objects.get(pk=w.pk).balance.amount for w in wallets}
        for n, (source_index, target_index, amount, grant) in enumerate(operations):
            source, target = wallets[source_index], wallets[target_index]
            # a grant from the platform keeps money flowing in
            transfer_post(
                kind="adjustment",
                reference="grant",
                idempotency_key=f"grant-{id(operations)}-{n}",
                legs=[Leg(sink.pk, -Money(grant, CASH)), Leg(source.pk, Money(grant, CASH))],
            )
            model[source.pk] += grant
            if source.pk == target.pk:
                continue
            try:
                with transaction.atomic():
                    move(source, target, amount, f"move-{id(operations)}-{n}")
            except InsufficientFunds:
                assert model[source.pk] < amount
            else:
                assert model[source.pk] >= amount
                model[source.pk] -= amount
                model[target.pk] += amount

        assert {w.pk: Account.objects.get(pk=w.pk).balance.amount for w in wallets} == model
        assert ledger_violations() == []
        transaction.set_rollback(True)
