"""The same year as tests/wallets/test_tax_properties.py, through the real services and the
database: random deposits (GST taken), wins, losses, withdrawals approved, failed or waiting,
then the year end. The test keeps its own account of the real net winnings from the balances
and what it did, independently of the tax code."""

import itertools
from decimal import Decimal

import pytest
from django.db.models import Sum
from django.utils import timezone
from djmoney.money import Money
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.builders import staff
from tests.wallets.invariants import ledger_violations
from tests.wallets.payments import approve, deposited, lost, percent, verified, won
from wallets.models import CASH, TdsYearEnd, Withdrawal
from wallets.roles import APPROVER, OPERATOR
from wallets.services.accounts import player_accounts
from wallets.services.players import player_get_or_create
from wallets.services.withdrawals import withdrawal_failed, withdrawal_request
from wallets.tax import formulas
from wallets.tax.tds import tds_year_end

pytestmark = pytest.mark.django_db

D = Decimal
players = itertools.count(1)
money = st.integers(min_value=100, max_value=300_000).map(lambda n: D(n) / 100)
ops = st.lists(
    st.one_of(
        st.tuples(st.just("deposit"), money),
        st.tuples(st.just("win"), money),
        st.tuples(st.just("lose"), st.integers(min_value=1, max_value=100)),
        st.tuples(st.just("withdraw"), st.integers(min_value=1, max_value=100)),
        st.tuples(st.just("fail"), st.integers(min_value=0, max_value=10)),
    ),
    min_size=1,
    max_size=14,
)


@pytest.fixture
def finance(db):
    return staff("op", OPERATOR), staff("ap", APPROVER)


@given(year_ops=ops)
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_a_year_through_the_services(finance, year_ops):
    operator, approver = finance
    name = f"prop-{next(players)}"
    player = verified(name)
    accounts = player_accounts(player=player_get_or_create(external_id=name))
    deposits = D(0)  # credited, by the test's own account

    def balance(bucket: str) -> Decimal:
        accounts[bucket].refresh_from_db()
        return accounts[bucket].balance.amount

    def counted() -> tuple[Decimal, Decimal]:
        rows = Withdrawal.objects.filter(player=player, status__in=Withdrawal.COUNTED)
        sums = rows.aggregate(w=Sum("amount"), t=Sum("taxed_net_winnings"))
        return sums["w"] or D(0), sums["t"] or D(0)

    def real() -> Decimal:
        withdrawn, _ = counted()
        return withdrawn + balance("deposit") + balance("winnings") - deposits

    approved: list[int] = []
    for n, (op, value) in enumerate(year_ops):
        if op == "deposit":
            deposited(name, f"{value}")
            deposits += value
        elif op == "win":
            won(name, f"{value}")
        elif op == "lose":
            for bucket in ("deposit", "winnings"):
                amount = percent(value, balance(bucket))
                if amount > 0:
                    lost(name, f"{amount}", bucket)
        elif op == "withdraw":
            amount = percent(value, balance("winnings"))
            if amount <= 0:
                continue
            w, _ = withdrawal_request(
                player_external_id=name, amount=Money(amount, CASH), reference=f"{name}-{n}"
            )
            assert 0 <= w.tds.amount <= amount and w.payout.amount == amount - w.tds.amount
            if w.tds.amount:
                event("tds withheld at a withdrawal")
                assert counted()[1] <= real()  # never taxes money not won
            if w.status == "requested" and n % 3:  # most are approved, some keep waiting
                approve(w.pk, operator, approver)
            if Withdrawal.objects.get(pk=w.pk).status == "approved":
                approved.append(w.pk)
        elif op == "fail" and approved:
            withdrawal_failed(
                client=None, withdrawal_id=approved.pop(value % len(approved)), reason="bank"
            )
            event("a withdrawal failed")

    # the year end: closing = deposit + winnings now (pending withdrawals are counted as such)
    taxed_before = counted()[1]
    real_end = real()
    fy = formulas.financial_year_of(timezone.now())
    tds_year_end(fy=fy, as_of=timezone.now())
    end = TdsYearEnd.objects.filter(player=player, fy=fy.label).first()
    end_taxed = end.net_winnings if end else D(0)  # its TDS may round to 0.00 (0.01 won)
    event(f"year end tds>0: {bool(end and end.tds)}; lost after taxed: {real_end < taxed_before}")
    if real_end >= taxed_before:
        assert taxed_before + end_taxed == real_end  # they meet
    else:  # lost after a taxed withdrawal: TDS is final, nothing more is taxed
        assert end is None or end.tds == 0
    assert ledger_violations() == []
