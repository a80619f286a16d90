"""The pure money math: exact to the paisa whatever the inputs (hypothesis)."""

from decimal import ROUND_FLOOR, Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rummy.test_properties import groupings
from tournaments.payouts import (
    bonus_cap,
    cancel_settlement,
    charge_by_bucket,
    drops_left,
    fee_of,
    largest_remainder,
    points_settlement,
    prize_settlement,
    refund_by_bucket,
    split_by_drop_value,
    split_settlement,
)
from tournaments.rummy import OUTCOMES, PRESETS, outcome_points

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
        back = refund_by_bucket(pairs, refund, rounded_down="bonus")
        assert sum(a for _, a in back) == refund
        assert all(a <= merged[b] for b, a in back)
    assert cancel_settlement(contributed={"x": total}).total == total


def test_a_loss_is_charged_to_the_buckets_in_proportion_the_bonus_part_rounded_down():
    paid = [("bonus", Decimal("8.00")), ("deposit", Decimal("72.00"))]  # 10 % cap of 80
    # lost 20.00 of 80: 2.00 of it is bonus (it used to be all 8.00: deposit came back first)
    assert refund_by_bucket(paid, Decimal("60.00"), rounded_down="bonus") == [
        ("bonus", Decimal("6.00")),
        ("deposit", Decimal("54.00")),
    ]
    # lost 0.19: the bonus part, 0.019, rounds down to 0.01; deposit takes the rest
    assert refund_by_bucket(paid, Decimal("79.81"), rounded_down="bonus") == [
        ("bonus", Decimal("7.99")),
        ("deposit", Decimal("71.82")),
    ]
    three = [("bonus", Decimal("1.00")), ("deposit", Decimal("1.00")), ("winnings", Decimal("2"))]
    assert refund_by_bucket(three, Decimal("3.99"), rounded_down="bonus") == [
        ("bonus", Decimal("1.00")),
        ("deposit", Decimal("1.00")),
        ("winnings", Decimal("1.99")),
    ]
    with pytest.raises(ValueError):
        refund_by_bucket(paid, Decimal("81"), rounded_down="bonus")


@given(
    cap=st.integers(min_value=0, max_value=100).map(Decimal),
    stake=st.integers(min_value=1, max_value=1_000_000).map(lambda n: Decimal(n) / 100),
    wallets=st.lists(st.tuples(paise, paise), min_size=1, max_size=4),
    kept=st.integers(min_value=0, max_value=10_000),
)
@settings(max_examples=500)
def test_no_loss_takes_more_bonus_than_the_entries_cap_share(cap, stake, wallets, kept):
    # a seat's entries (a rejoin is one more), each bonus first and at most the cap of the stake
    contributed: dict[str, Decimal] = {}
    for bonus, deposit in wallets:
        balances = {"bonus": bonus, "deposit": deposit}
        plan = charge_by_bucket(
            balances, ["bonus", "deposit"], stake, {"bonus": bonus_cap(stake, cap)}
        )
        if plan is None:
            continue
        for bucket, taken in plan:
            contributed[bucket] = contributed.get(bucket, Decimal(0)) + taken
    total = sum(contributed.values(), Decimal(0))
    refund = (total * kept / 10_000).quantize(Decimal("0.01"), rounding=ROUND_FLOOR)

    back = dict(refund_by_bucket(list(contributed.items()), refund, rounded_down="bonus"))

    lost = total - refund
    bonus_lost = contributed.get("bonus", Decimal(0)) - back.get("bonus", Decimal(0))
    assert Decimal(0) <= bonus_lost <= bonus_cap(lost, cap)
    assert sum(back.values(), Decimal(0)) == refund
    assert all(Decimal(0) <= back.get(b, Decimal(0)) <= a for b, a in contributed.items())


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


# ---------------------------------------------------------------- split by drop value (item 7)


def test_split_by_drop_value_pays_the_extra_drops_then_shares_the_rest():
    # Pool 101, 4 x 100 = 400, 10 % fee -> 360 to share. Scores 20, 61, 75 leave 4, 1, 1 drops:
    # a holds 3 drops above the fewest -> 3 x 50 = 150 first; the other 210 split three ways.
    drops = {"a": drops_left(20, 101, 20), "b": drops_left(61, 101, 20), "c": 1}
    assert drops == {"a": 4, "b": 1, "c": 1}
    s = split_by_drop_value(
        prize=Decimal("400"), drops=drops, entry_fee=Decimal("50"), fee_percent=Decimal("10")
    )
    assert s.fee == Decimal("40.00")
    assert s.payouts == {"a": Decimal("220.00"), "b": Decimal("70.00"), "c": Decimal("70.00")}
    # The rest does not split evenly: largest remainder, the earlier seat first.
    s = split_by_drop_value(
        prize=Decimal("400"),
        drops={"a": 4, "b": 2, "c": 1},
        entry_fee=Decimal("50"),
        fee_percent=Decimal("10"),
    )
    assert s.payouts == {"a": Decimal("203.34"), "b": Decimal("103.33"), "c": Decimal("53.33")}
    assert s.total == Decimal("400")


def test_split_by_drop_value_falls_back_when_the_extra_drops_exceed_the_pot():
    # 3 + 1 extra drops at 100 = 400 > 360 left after the fee: shares by (drops left + 1) = 5:3:2.
    s = split_by_drop_value(
        prize=Decimal("400"),
        drops={"a": 4, "b": 2, "c": 1},
        entry_fee=Decimal("100"),
        fee_percent=Decimal("10"),
    )
    assert s.payouts == {"a": Decimal("180.00"), "b": Decimal("108.00"), "c": Decimal("72.00")}
    # Exactly the pot is not "more than" it: no fallback, nothing left to share equally.
    s = split_by_drop_value(
        prize=Decimal("400"),
        drops={"a": 4, "b": 1},
        entry_fee=Decimal("120"),
        fee_percent=Decimal("10"),
    )
    assert s.payouts == {"a": Decimal("360.00"), "b": Decimal("0.00")}


def test_split_by_drop_value_refuses_nonsense():
    for drops, entry in (({}, "50"), ({"a": -1, "b": 2}, "50"), ({"a": 1, "b": 2}, "0.005")):
        with pytest.raises(ValueError):
            split_by_drop_value(
                prize=Decimal("100"),
                drops=drops,
                entry_fee=Decimal(entry),
                fee_percent=Decimal("0"),
            )


@given(
    paise,
    percent,
    st.integers(min_value=0, max_value=100_000).map(lambda n: Decimal(n) / 100),
    st.lists(st.integers(min_value=0, max_value=9), min_size=2, max_size=6),
)
def test_split_by_drop_value_is_exact_and_falls_back_exactly_when_it_must(
    prize, fee_percent, entry_fee, drop_counts
):
    drops = {f"p{i}": d for i, d in enumerate(drop_counts)}
    s = split_by_drop_value(prize=prize, drops=drops, entry_fee=entry_fee, fee_percent=fee_percent)
    shares = [s.payouts[p] for p in drops]
    assert sum(shares) + s.fee == prize
    assert all(x >= 0 and x == x.quantize(Decimal("0.01")) for x in shares)
    pot = prize - s.fee
    extra = [entry_fee * (d - min(drop_counts)) for d in drop_counts]
    if sum(extra) > pot:  # the fallback: (drops left + 1) shares
        assert shares == largest_remainder(pot, [d + 1 for d in drop_counts])
    else:  # the extra drops paid in full, the rest equal to the paisa
        equal = [x - e for x, e in zip(shares, extra, strict=True)]
        assert max(equal) - min(equal) <= Decimal("0.01")
        assert sum(equal) == pot - sum(extra)


# ---------------------------------------------------------------- the points cap


@settings(max_examples=150, deadline=None)
@given(
    st.data(),
    st.sampled_from(sorted(PRESETS)),
    st.integers(min_value=1, max_value=100_000).map(lambda n: Decimal(n) / 100),
    percent,
)
def test_no_loser_in_a_points_deal_pays_more_than_80_points(data, preset, point_value, fee):
    # Whatever each loser's outcome and cards, the engine's points keep every loss within
    # 80 x point value. The stakes are far above that, so the escrow is not what caps it.
    rules = PRESETS[preset]
    allowed = [o for o in OUTCOMES if o != "declared"]
    if not rules.drops_allowed:
        allowed = [o for o in allowed if o not in ("first_drop", "middle_drop")]
    losers = [f"p{i}" for i in range(1, data.draw(st.integers(1, 5)) + 1)]
    points = {"p0": 0}
    for p in losers:
        outcome = data.draw(st.sampled_from(allowed), label=f"{p} outcome")
        _, wild, groups = data.draw(groupings(rules), label=f"{p} hand")
        if outcome != "lost" and data.draw(st.booleans(), label=f"{p} shows no cards"):
            groups = None
        points[p] = outcome_points(outcome, rules, groups=groups, wild_joker=wild)
    stake = point_value * 1000
    s = points_settlement(
        stakes=dict.fromkeys(points, stake),
        points=points,
        winner="p0",
        point_value=point_value,
        fee_percent=fee,
    )
    for p in losers:
        paid = stake - s.refunds[p]
        assert paid == points[p] * point_value
        assert paid <= 80 * point_value
    assert s.total == stake * len(points)
