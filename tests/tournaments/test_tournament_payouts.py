"""Tournament money, pure: fee, pool, overlay, prize table, ranks with ties (hypothesis)."""

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments.payouts import (
    PrizeRow,
    RankGroup,
    paid_from,
    prize_runs,
    prizes_by_player,
    rank_prizes,
    tournament_pool,
    tournament_ranks,
)

D = Decimal


def test_pool_overlay_and_fee():
    figures = tournament_pool(collected=D("3700.00"), fee_percent=D("15"), guarantee=D("5000"))
    assert (figures.fee, figures.prize_pool, figures.overlay) == (
        D("555.00"),
        D("5000"),
        D("1855.00"),
    )
    figures = tournament_pool(collected=D("10000.00"), fee_percent=D("15"), guarantee=D("5000"))
    assert (figures.fee, figures.prize_pool, figures.overlay) == (D("1500.00"), D("8500.00"), 0)


def test_prizes_round_down_and_leftover_goes_to_the_better_rank():
    rows = [PrizeRow(1, 1, D("40")), PrizeRow(2, 4, D("20"))]
    assert rank_prizes(D("0.10"), rows) == [D("0.04"), D("0.02"), D("0.02"), D("0.02")]
    assert rank_prizes(D("0.11"), rows) == [D("0.05"), D("0.02"), D("0.02"), D("0.02")]
    assert rank_prizes(D("0.13"), rows) == [D("0.05"), D("0.03"), D("0.03"), D("0.02")]


def test_runs_of_equal_amounts():
    assert prize_runs([D("5"), D("2"), D("2"), D("1")]) == [
        (1, 1, D("5")),
        (2, 3, D("2")),
        (4, 4, D("1")),
    ]


def test_ties_share_the_ranks_they_span():
    groups = tournament_ranks(
        final={"f1": 2, "f2": 1},
        knocked_out={1: {"a": 100, "b": 300, "c": 300, "d": 50}, 2: {"e": 10}},
    )
    assert groups == [
        RankGroup(1, ("f2",)),
        RankGroup(2, ("f1",)),
        RankGroup(3, ("e",)),
        RankGroup(4, ("b", "c")),
        RankGroup(6, ("a",)),
        RankGroup(7, ("d",)),
    ]
    prizes = [D("10"), D("5"), D("3"), D("2.01"), D("1.00")]
    paid = prizes_by_player(groups, prizes)
    # ranks 4 and 5 (2.01 + 1.00) shared: 1.51 to b (first external id), 1.50 to c
    assert (paid["b"], paid["c"], paid["a"], paid["d"]) == (D("1.51"), D("1.50"), 0, 0)


paise = st.integers(min_value=0, max_value=100_000_000).map(lambda n: D(n) / 100)


@st.composite
def prize_tables(draw):
    """Runs of ranks whose percentages (in hundredths) add up to exactly 100."""
    n_rows = draw(st.integers(min_value=1, max_value=8))
    sizes = [draw(st.integers(min_value=1, max_value=5)) for _ in range(n_rows)]
    # give every rank a whole number of hundredths; rows take equal shares of what is left
    units = 10_000
    rows, rank = [], 1
    for i, size in enumerate(sizes):
        if i == len(sizes) - 1:
            if units % size:
                size = 1
            each = units // size
        else:
            most = (units - (len(sizes) - i - 1)) // size
            if most < 1:
                break
            each = draw(st.integers(min_value=1, max_value=max(1, most // 2)))
        rows.append(PrizeRow(rank, rank + size - 1, D(each) / 100))
        units -= each * size
        rank += size
    if units:
        last = rows[-1]
        rows.append(PrizeRow(last.rank_to + 1, last.rank_to + 1, D(units) / 100))
    return rows


@settings(deadline=None)  # up to 200 players ranked per example: slow on a busy machine
@given(
    prize_tables(),
    st.integers(min_value=0, max_value=200),  # players beyond the paid ranks
    st.integers(min_value=0, max_value=100_000).map(lambda n: D(n) / 100),  # entry fee
    st.integers(min_value=0, max_value=50),  # rebuys
    st.integers(min_value=0, max_value=9_999).map(lambda n: D(n) / 100),  # fee %
    paise,  # guarantee
    st.data(),
)
def test_prizes_plus_fee_is_collected_plus_overlay(
    rows, extra, entry_fee, rebuys, fee_percent, guarantee, data
):
    paid_ranks = rows[-1].rank_to
    assert sum(r.percent * (r.rank_to - r.rank_from + 1) for r in rows) == 100
    players = [f"p{n:04d}" for n in range(paid_ranks + extra)]
    collected = entry_fee * (len(players) + rebuys)
    figures = tournament_pool(collected=collected, fee_percent=fee_percent, guarantee=guarantee)
    # any split into a final table and rounds of knocked-out players, chips with ties
    final_size = data.draw(st.integers(min_value=1, max_value=min(6, len(players))))
    final = {p: n for n, p in enumerate(players[:final_size], start=1)}
    knocked_out: dict[int, dict[str, int]] = {}
    for p in players[final_size:]:
        round_no = data.draw(st.integers(min_value=1, max_value=3))
        knocked_out.setdefault(round_no, {})[p] = data.draw(st.integers(0, 5))
    groups = tournament_ranks(final=final, knocked_out=knocked_out)
    prizes = prizes_by_player(groups, rank_prizes(figures.prize_pool, rows))
    assert sorted(prizes) == sorted(players)
    assert all(p >= 0 and p == p.quantize(D("0.01")) for p in prizes.values())
    assert sum(prizes.values()) + figures.fee == collected + figures.overlay
    assert figures.overlay >= 0 and figures.prize_pool >= guarantee
    assert sorted(g.rank for g in groups) == [g.rank for g in groups]
    assert sum(len(g.players) for g in groups) == len(players)
    # the payout: entries and rebuys in escrow shards (by seat) and the overlay pay the fee and
    # each prize exactly, every source given out exactly once
    shards = data.draw(st.integers(min_value=1, max_value=16))
    sources = [(n, entry_fee * len(range(n, len(players) + rebuys, shards))) for n in range(shards)]
    sources.append((shards, figures.overlay))
    amounts = [figures.fee, *prizes.values()]
    parts = paid_from(sources, amounts)
    assert [sum((a for _, a in p), D(0)) for p in parts] == amounts
    drawn = {n: sum((a for p in parts for k, a in p if k == n), D(0)) for n, _ in sources}
    assert drawn == dict(sources)
    assert all(a > 0 for p in parts for _, a in p)
