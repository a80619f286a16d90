"""The pure rules of leaderboards: a game's points by each rule, standings with shared ranks,
and prizes that never pay more than the table and share ties as tournaments do."""

from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from tournaments.leaderboards.rules import (
    PARAMETERS,
    SeatResult,
    Standing,
    entry_fee_shares,
    fee_shares,
    game_points,
    prize_plan,
    standings,
)
from tournaments.payouts import TICKET, PrizeRow

D = Decimal
TABLE = (PrizeRow(1, 1, None, amount=D("1000.00")), PrizeRow(2, 3, None, amount=D("100.00")))


def test_the_fee_rule_shares_a_games_fee_by_prize_and_results_score_net():
    seats = {
        "a": SeatResult(paid_in=D("80.00"), got_back=D("143.00"), prize=D("63.00")),
        "b": SeatResult(paid_in=D("80.00"), got_back=D("58.00"), prize=D("0.00")),
        "c": SeatResult(paid_in=D("80.00"), got_back=D("80.00"), prize=D("0.00")),
    }
    assert game_points("fee", PARAMETERS["fee"], fee_shares(D("9.00"), seats), seats) == {
        "a": D("9.00")
    }
    assert game_points(
        "fee", {"points_per_rupee": D("2.5")}, fee_shares(D("9.00"), seats), seats
    ) == {"a": D("22.50")}
    # net +63 / 100; -22 / 200 (0.11); an even game scores nothing
    assert game_points("results", PARAMETERS["results"], {}, seats) == {
        "a": D("0.63"),
        "b": D("0.11"),
    }
    split = {
        "a": SeatResult(D("10.00"), D("30.00"), D("20.00")),
        "b": SeatResult(D("10.00"), D("10.00"), D("10.00")),
    }
    assert game_points("fee", PARAMETERS["fee"], fee_shares(D("1.00"), split), split) == {
        "a": D("0.67"),
        "b": D("0.33"),
    }
    # a tournament charges its fee on entries: its entrants share it by what each paid in
    entries = {
        "a": SeatResult(D("100.00"), D("0.00"), D("0.00")),
        "b": SeatResult(D("200.00"), D("255.00"), D("255.00")),
        "c": SeatResult(D("0.00"), D("0.00"), D("0.00")),
    }
    assert entry_fee_shares(D("45.00"), entries) == {"a": D("15.00"), "b": D("30.00")}
    assert game_points(
        "fee", PARAMETERS["fee"], entry_fee_shares(D("45.00"), entries), entries
    ) == {
        "a": D("15.00"),
        "b": D("30.00"),
    }


def test_equal_points_share_a_rank():
    ranked = standings([("d", D("1")), ("b", D("5")), ("c", D("5")), ("a", D("9"))])
    assert [(s.rank, s.player) for s in ranked] == [(1, "a"), (2, "b"), (2, "c"), (4, "d")]


def test_ties_share_the_ranks_they_span_and_seats_go_to_a_group_wholly_within():
    ranked = standings([("a", D("9")), ("b", D("5")), ("c", D("5")), ("d", D("5"))])
    # b, c and d share ranks 2-4: 100 + 100 + nothing, to the paisa
    assert prize_plan(ranked, TABLE, D("0")).money == {
        "a": D("1000.00"), "b": D("66.67"), "c": D("66.67"), "d": D("66.66"),
    }  # fmt: skip
    seats = (PrizeRow(1, 2, None, TICKET, "main"), PrizeRow(3, 3, None, amount=D("10.00")))
    plan = prize_plan(standings([("a", D("9")), ("b", D("8")), ("c", D("1"))]), seats, D("100"))
    assert (plan.tickets, plan.money) == (["a", "b"], {"c": D("10.00")})
    across = standings([("a", D("9")), ("b", D("8")), ("c", D("8"))])
    plan = prize_plan(across, seats, D("100"))  # b and c tie across the last seat: money
    assert (plan.tickets, plan.money) == (["a"], {"b": D("55.00"), "c": D("55.00")})


points = st.decimals(min_value=0, max_value=100, places=2)


@given(st.dictionaries(st.text("abcdefgh", min_size=1, max_size=3), points, max_size=12))
def test_prizes_never_pay_more_than_the_table_and_pay_all_of_it_to_enough_players(table):
    ranked = standings(list(table.items()))
    plan = prize_plan(ranked, TABLE, D("0"))
    paid = sum(plan.money.values(), D("0"))
    scoring = [s for s in ranked if s.points > 0]
    assert paid <= D("1200.00")
    assert all(amount > 0 for amount in plan.money.values())
    if len(scoring) >= 3:
        assert paid == D("1200.00")
    # equal points, equal prizes (within the paisa a split leaves)
    for a in plan.money:
        for b in plan.money:
            if table[a] == table[b]:
                assert abs(plan.money[a] - plan.money[b]) <= D("0.01")
    # more points never win less
    for a in scoring:
        for b in scoring:
            if a.points > b.points:
                assert plan.money.get(a.player, 0) >= plan.money.get(b.player, 0)


def test_a_skipped_player_passes_the_prize_to_the_next_eligible():
    ranked = [Standing(1, "a", D("9")), Standing(2, "b", D("5")), Standing(3, "c", D("4"))]
    eligible = [s for s in ranked if s.player != "a"]
    assert prize_plan(eligible, TABLE, D("0")).money == {"b": D("1000.00"), "c": D("100.00")}
