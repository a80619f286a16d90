"""Rule 133 over a whole year, as properties of the pure formulas (wallets.tax.formulas): a player's
random year of deposits, wins, losses, withdrawals (some failing) and the year end.

What holds, and what does not:
- TDS is never negative, and never more than the amount withdrawn;
- whenever TDS is withheld, the net winnings taxed so far do not exceed the player's real net
  winnings at that moment (withdrawals + balance - deposits - opening): TDS never taxes money
  the player has not won;
- at the year end, taxed and real net winnings meet. The one exception is Rule 133's own: a
  player who lost, after a taxed withdrawal, more than they won since, was taxed on winnings
  they later lost; TDS is final (the player claims it back in their return), so the year end
  taxes nothing more and taxed stays above real.
"""

from dataclasses import dataclass, field
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from wallets.tax import formulas

D = Decimal
RATE = D(30)
ZERO = D("0.00")
money = st.integers(min_value=1, max_value=500_000).map(lambda n: D(n) / 100)
ops = st.lists(
    st.one_of(
        st.tuples(st.just("deposit"), money),
        st.tuples(st.just("win"), money),
        st.tuples(st.just("lose"), st.floats(min_value=0.0, max_value=1.0)),
        st.tuples(st.just("withdraw"), st.floats(min_value=0.01, max_value=1.0)),
        st.tuples(st.just("fail"), st.integers(min_value=0, max_value=20)),
    ),
    max_size=40,
)


@dataclass
class Year:
    opening: Decimal
    deposit: Decimal = ZERO  # the deposit bucket
    winnings: Decimal = ZERO
    deposits: Decimal = ZERO
    withdrawals: list[tuple[Decimal, Decimal]] = field(default_factory=list)  # (amount, taxed)

    def __post_init__(self):
        self.winnings = self.opening

    @property
    def withdrawn(self) -> Decimal:
        return sum((a for a, _ in self.withdrawals), D(0))

    @property
    def taxed(self) -> Decimal:
        return sum((t for _, t in self.withdrawals), D(0))

    @property
    def real(self) -> Decimal:
        return self.withdrawn + self.deposit + self.winnings - self.deposits - self.opening


def share(fraction: float, of: Decimal) -> Decimal:
    return min(of, (of * D(str(round(fraction, 4)))).quantize(D("0.01")))


@given(money, ops)
@settings(max_examples=400, deadline=None)
def test_a_year_of_withdrawals_never_taxes_money_not_won_and_meets_at_year_end(opening, year_ops):
    year = Year(opening=opening)
    for op, value in year_ops:
        if op == "deposit":
            year.deposit += value
            year.deposits += value
        elif op == "win":
            year.winnings += value
        elif op == "lose":  # entries take the deposit bucket first, then winnings
            lost = share(value, year.deposit + year.winnings)
            from_deposit = min(lost, year.deposit)
            year.deposit -= from_deposit
            year.winnings -= lost - from_deposit
        elif op == "withdraw":
            amount = share(value, year.winnings)
            if amount <= 0:
                continue
            due = formulas.tds_at_withdrawal(
                amount=amount,
                withdrawn_before=year.withdrawn,
                deposits=year.deposits,
                opening=year.opening,
                taxed_before=year.taxed,
                rate_percent=RATE,
            )
            assert 0 <= due.tds <= amount
            year.winnings -= amount
            year.withdrawals.append((amount, due.taxed))
            if due.tds:
                assert year.taxed <= year.real
        elif op == "fail" and year.withdrawals:  # the money and its TDS come back
            amount, _ = year.withdrawals.pop(value % len(year.withdrawals))
            year.winnings += amount

    taxed_before = year.taxed
    end = formulas.tds_at_year_end(
        withdrawals=year.withdrawn,
        closing=year.deposit + year.winnings,
        deposits=year.deposits,
        opening=year.opening,
        taxed_before=taxed_before,
        rate_percent=RATE,
    )
    assert end.tds >= 0 and end.tds <= (year.deposit + year.winnings)
    taxed = taxed_before + end.taxed
    if year.real >= taxed_before:
        assert taxed == year.real  # they meet
    else:
        assert (end.tds, taxed) == (0, taxed_before)  # lost after a taxed withdrawal
