"""The pure money math: exact to the paisa whatever the inputs (hypothesis)."""

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tournaments.payouts import (
    cancel_settlement,
    charge_by_bucket,
    drops_left,
    fee_of,
    largest_remainder,
    points_settlement,
    prize_settlement,
    refund_by_bucket,
    split_settlement,
)

paise = st.integers(min_value=0, max_value=10_000_000).map(lambda n: Decimal(n) / 100)
percent = st.integers(min_value=0, max_value=10_000).map(lambda n: Decimal(n) / 100)


def test_largest_remainder_examples():
    assert largest_remainder(Decimal("10"), [1, 2]) == [Decimal("3.33"), Decimal("6.67")]
    assert largest_remainder(Decimal("1.00"), [1, 1, 1]) == [
        Decimal("0.34"),
        Decimal("0.33"),
        Decimal("0.33"),
    ]
    assert largest_remainder(Decimal("0.05"), [0, 0]) == [Decimal("0.03"), Decimal("0.02")]


@given(paise, st.lists(st.integers(min_value=0, max_value=1000), min_size=1, max_size=6))
def test_largest_remainder_adds_up_and_is_fair(amount, weights):
    shares = largest_remainder(amount, weights)
    assert sum(shares) == amount
    assert all(s >= 0 and s == s.quantize(Decimal("0.01")) for s in shares)
    total = sum(weights) or len(weights)
    for share, w in zip(shares, weights, strict=True):
        exact = amount * Decimal(w if sum(weights) else 1) / total
        assert abs(share - exact) < Decimal("0.01")


def test_fee_rounds_half_to_even():
    assert fee_of(Decimal("220.00"), Decimal("10")) == Decimal("22.00")
    assert fee_of(Decimal("0.25"), Decimal("10")) == Decimal("0.02")  # 0.025 -> 0.02
    assert fee_of(Decimal("0.35"), Decimal("10")) == Decimal("0.04")  # 0.035 -> 0.04


def test_points_worked_example_s0():
    # S0: 4 players, 2 a point, losers 20, 40, 50: 2 x 110 = 220 to the winner, minus the fee.
    stakes = {p: Decimal("160.00") for p in "abcd"}
    s = points_settlement(
        stakes=stakes,
        points={"a": 0, "b": 20, "c": 40, "d": 50},
        winner="a",
        point_value=Decimal("2.00"),
        fee_percent=Decimal("10"),
    )
    assert s.payouts == {"a": Decimal("198.00")} and s.fee == Decimal("22.00")
    assert s.refunds == {
        "a": Decimal("160.00"),
        "b": Decimal("120.00"),
        "c": Decimal("80.00"),
        "d": Decimal("60.00"),
    }
    assert s.total == Decimal("640.00")


@given(
    st.integers(min_value=1, max_value=100_000).map(lambda n: Decimal(n) / 100),
    st.lists(st.integers(min_value=0, max_value=80), min_size=2, max_size=6),
    percent,
)
def test_points_settlement_is_exact(point_value, points, fee_percent):
    players = [f"p{i}" for i in range(len(points))]
    stake = point_value * 80
    s = points_settlement(
        stakes=dict.fromkeys(players, stake),
        points=dict(zip(players, [0, *points[1:]], strict=True)),
        winner=players[0],
        point_value=point_value,
        fee_percent=fee_percent,
    )
    assert s.total == stake * len(players)
    assert all(v >= 0 for v in [*s.payouts.values(), *s.refunds.values(), s.fee])


@given(paise, percent, st.lists(st.integers(min_value=0, max_value=5), min_size=2, max_size=6))
def test_prize_and_split_are_exact(prize, fee_percent, weights):
    assert prize_settlement(prize=prize, winner="w", fee_percent=fee_percent).total == prize
    players = {f"p{i}": w + 1 for i, w in enumerate(weights)}
    s = split_settlement(prize=prize, weights=players, fee_percent=fee_percent)
    assert s.total == prize


@given(st.lists(st.tuples(st.sampled_from(["bonus", "deposit", "winnings"]), paise), max_size=3))
def test_refunds_go_back_where_they_came_from(contributed):
    merged: dict[str, Decimal] = {}
    for b, a in contributed:
        merged[b] = merged.get(b, Decimal(0)) + a
    pairs = list(merged.items())
    total = sum(merged.values(), Decimal(0))
    for refund in (Decimal(0), total, (total / 3).quantize(Decimal("0.01"))):
        back = refund_by_bucket(pairs, refund)
        assert sum(a for _, a in back) == refund
        assert all(a <= merged[b] for b, a in back)
    assert cancel_settlement(contributed={"x": total}).total == total


def test_refund_fills_the_last_charged_bucket_first():
    paid = [("bonus", Decimal("30")), ("deposit", Decimal("50"))]
    assert refund_by_bucket(paid, Decimal("60")) == [
        ("deposit", Decimal("50")),
        ("bonus", Decimal("10")),
    ]
    with pytest.raises(ValueError):
        refund_by_bucket(paid, Decimal("81"))


def test_charge_follows_the_bucket_order():
    balances = {"bonus": Decimal("10"), "deposit": Decimal("100"), "winnings": Decimal("5")}
    order = ["bonus", "deposit", "winnings"]
    assert charge_by_bucket(balances, order, Decimal("50")) == [
        ("bonus", Decimal("10")),
        ("deposit", Decimal("40")),
    ]
    assert charge_by_bucket(balances, order, Decimal("116")) is None


def test_drops_left():
    assert drops_left(0, 101, 20) == 5
    assert drops_left(61, 101, 20) == 1
    assert drops_left(100, 101, 20) == 0
    assert drops_left(0, 201, 25) == 8
