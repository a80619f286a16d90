"""docs/rules.md through the formats (pure, no database): a deal won without a show, valid losing
hands, the deck count per table, Rummy 500's seats, the drop-value split; and the properties
(the points cap, a valid hand pays at most 2) through what settlement runs: the format's
`score_deal` and `apply_deal`."""

from dataclasses import dataclass
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import LOSER_22, WILD, WINNER
from tests.rummy.test_properties import groupings, wilds
from tournaments.errors import DealRejected, TermsInvalid
from tournaments.games.formats import FORMATS, Table, format_of, game_terms
from tournaments.games.formats.thirteen_card import LEFT_WITHOUT_SHOW
from tournaments.rummy import PRESETS, card_names, evaluate_declaration

S1_FOUR_WAY = [  # S1 at 4 players deals 3 decks: 9S three times is an honest deal
    ["9S", "9S", "9S"],
    ["2H", "3H", "4H", "5H"],
    ["6D", "7D", "8D"],
    ["JC", "QC", "KC"],
]
S1_WINNER = [["10S", "JS", "QS"], ["4H", "5H", "6H", "7H"], ["2D", "2C", "2H"], ["9D", "9C", "9H"]]


@dataclass
class Seat:
    external_id: str
    score: int = 0
    eliminated: bool = False


def terms(fmt: str = "points", rules=None, **kw):
    fields = {
        "template": "t",
        "format": fmt,
        "currency": "INR",
        "chips": False,
        "seats": 6,
        "point_value": Decimal("2.00") if fmt == "points" else None,
        "entry_fee": None if fmt == "points" else Decimal("100.00"),
        "fee_percent": Decimal("10"),
        "deals": 2 if fmt == "deals" else None,
        "rules": rules,
        "split_policy": "none",
        "rejoin_allowed": False,
        "entry_buckets": ["deposit"],
    }
    return game_terms(**{**fields, **kw})


def r(player: str, outcome: str, groups=None, **extra) -> dict:
    return {"player": player, "outcome": outcome, "groups": groups, **extra}


def check(results: list[dict], fmt: str = "points", wild: str = WILD, **kw):
    t = terms(fmt, **kw)
    players = [x["player"] for x in results]
    payload = {"deal_no": 1, "wild_joker": wild, "results": results}
    return t, format_of(fmt).check_deal(
        terms=t, players=players, eliminated=[], expected_no=1, payload=payload
    )


def refused(results: list[dict], fmt: str = "points", **kw) -> str:
    with pytest.raises(DealRejected) as exc:
        check(results, fmt, **kw)
    return str(exc.value.code)


# --------------------------------------------------------------- item 1: no valid show


def test_two_players_a_wrong_show_ends_the_deal_and_the_opponent_wins_without_a_show():
    t, deal = check([r("a", "wrong_show"), r("b", "declared")])
    assert deal.score.points == {"a": 80, "b": 0}
    seats = [Seat("a"), Seat("b")]
    paid = format_of("points").apply_deal(
        Table(t, seats, t.stake * 2, 1), deal.results, deal.score.points
    )
    # 80 x 2.00 = 160 minus 10 % to the winner; the loser's whole stake is kept
    assert paid.payouts == {"b": Decimal("144.00")} and paid.fee == Decimal("16.00")
    assert paid.refunds == {"a": Decimal("0.00"), "b": Decimal("160.00")}


@pytest.mark.parametrize("fmt", ["points", "pool101", "pool201", "deals"])
def test_the_last_player_standing_wins_in_every_format(fmt):
    out = "timeout" if fmt == "deals" else "first_drop"  # deals rummy allows no drop
    results = [r("a", "wrong_show"), r("b", out), r("c", "auto_play"), r("d", "declared")]
    _, deal = check(results, fmt)
    drop = PRESETS["pool201"].first_drop_points if fmt == "pool201" else 20
    assert deal.score.points == {"a": 80, "b": 40 if fmt == "deals" else drop, "c": 80, "d": 0}


def test_a_winner_without_a_show_needs_everyone_else_out_of_the_deal():
    results = [r("a", "declared"), r("b", "wrong_show"), r("c", "lost", LOSER_22)]
    assert refused(results) == "declaration_missing"
    results = [r("a", "declared"), r("b", "valid_second")]
    assert refused(results) == "declaration_missing"


def test_a_winner_who_sends_groups_is_still_checked():
    bad = [["7S", "8S", "9C", "10S"], ["9D", "9S", "9H"], ["2C", "2H", "2D"], ["5H", "6H", "7H"]]
    assert refused([r("a", "wrong_show"), r("b", "declared", bad)]) == "invalid_declaration"
    _, deal = check([r("a", "wrong_show"), r("b", "declared", WINNER)])
    assert deal.score.points == {"a": 80, "b": 0}


def test_a_valid_wrong_show_cannot_leave_the_deal_to_a_winner_without_a_show():
    results = [r("a", "wrong_show", WINNER), r("b", "declared")]
    assert refused(results) == "wrong_show_valid"
    # an invalid hand shown is the wrong show it was posted as
    _, deal = check([r("a", "wrong_show", LOSER_22), r("b", "declared")])
    assert deal.score.points == {"a": 80, "b": 0} and deal.score.reclassified == {}


# --------------------------------------------------------------- item 2: valid losers pay 2


def test_a_valid_hand_posted_lost_scores_two_and_the_deal_says_so():
    results = [r("a", "declared", WINNER), r("b", "lost", WINNER, claimed_points=0)]
    _, deal = check(results)
    assert deal.score.points == {"a": 0, "b": 2}
    assert deal.score.reclassified == {"b": ("lost", "valid_second")}
    assert deal.score.discrepancies(deal.results) == {
        "b": {
            "claimed": 0,
            "computed": 2,
            "posted_outcome": "lost",
            "scored_outcome": "valid_second",
        }
    }


def test_a_valid_hand_behind_a_wrong_show_scores_two_when_the_winner_showed():
    _, deal = check([r("a", "declared", WINNER), r("b", "wrong_show", WINNER)])
    assert deal.score.points == {"a": 0, "b": 2}
    assert deal.score.discrepancies(deal.results) == {
        "b": {"posted_outcome": "wrong_show", "scored_outcome": "valid_second"}
    }


@pytest.mark.parametrize("outcome", sorted(LEFT_WITHOUT_SHOW))
def test_a_player_who_left_the_deal_pays_its_price_whatever_cards_are_posted(outcome):
    # A drop forfeits at the rules' price (20 / 40; timeout and leaving are middle drops,
    # auto-play a full count): the cards held then are no declaration and cannot lower it.
    _, deal = check([r("a", "declared", WINNER), r("b", outcome, WINNER)])
    expected = {"first_drop": 20, "middle_drop": 40, "timeout": 40, "left": 40, "auto_play": 80}
    assert deal.score.points == {"a": 0, "b": expected[outcome]}
    assert deal.score.reclassified == {}


def test_claimed_points_keep_their_shape():
    _, deal = check([r("a", "declared", WINNER), r("b", "lost", LOSER_22, claimed_points=20)])
    assert deal.score.discrepancies(deal.results) == {"b": {"claimed": 20, "computed": 22}}


# ----------------------------------------------------------- item 3: S1's decks follow the table


def test_s1_deals_three_decks_to_four_players_and_two_to_three():
    four = [r("a", "declared", S1_WINNER), r("b", "lost", S1_FOUR_WAY), r("c", "first_drop")]
    assert refused(four, rules="S1") == "too_many_copies"  # 3 players: 2 decks
    _, deal = check([*four, r("d", "middle_drop")], rules="S1")
    # and it is a valid S1 hand (9S 9S 9S is a pure sequence with 3 decks): 2, not 0
    assert deal.score.points["b"] == 2
    assert deal.score.reclassified == {"b": ("lost", "valid_second")}


def test_the_deck_count_follows_the_players_dealt_in_not_the_seats():
    # A pool game of 4 with one player eliminated deals 2 decks to the 3 left (S1).
    t = terms("pool101", rules={"preset": "S1", "pool_limit": 101, "rejoin_below": 79})
    payload = {
        "deal_no": 2,
        "wild_joker": WILD,
        "results": [r("a", "declared", S1_WINNER), r("b", "lost", S1_FOUR_WAY), r("c", "left")],
    }
    with pytest.raises(DealRejected) as exc:
        format_of("pool101").check_deal(
            terms=t, players=list("abcd"), eliminated=["d"], expected_no=2, payload=payload
        )
    assert exc.value.code == "too_many_copies"


def test_a_table_of_one_is_refused_not_a_crash():
    t = terms()
    payload = {"deal_no": 1, "wild_joker": WILD, "results": [r("a", "declared", WINNER)]}
    with pytest.raises(DealRejected, match="seats 2 to 6"):
        format_of("points").check_deal(
            terms=t, players=["a"], eliminated=[], expected_no=1, payload=payload
        )


# --------------------------------------------------------------- item 8: Rummy 500 seats 2 to 8


def test_rummy500_seats_two_to_eight_and_the_13_card_formats_two_to_six():
    assert terms("rummy500", seats=8).seats == 8
    for fmt, seats in (("rummy500", 9), ("rummy500", 1), ("points", 7), ("pool101", 8)):
        with pytest.raises(TermsInvalid) as exc:
            terms(fmt, seats=seats)
        assert exc.value.field == "seats"
    assert {f: (x.min_seats, x.max_seats) for f, x in FORMATS.items()} == {
        "points": (2, 6),
        "pool101": (2, 6),
        "pool201": (2, 6),
        "deals": (2, 6),
        "rummy500": (2, 8),
    }


def r500(player: str, melded, in_hand=()) -> dict:
    return {"player": player, "melded": melded, "laid_off": [], "in_hand": list(in_hand)}


@pytest.mark.parametrize("players", [4, 5])
def test_rummy500_deals_two_decks_from_five_players(players):
    # 8C melded twice: one deck holds one, two decks (5+ players) hold two.
    results = [r500("p0", [["8C", "8D", "8H"]]), r500("p1", [["6C", "7C", "8C"]])]
    results += [r500(f"p{n}", [], [f"{n}S"]) for n in range(2, players)]
    if players < 5:
        assert refused(results, "rummy500", wild="", seats=8) == "too_many_copies"
    else:
        _, deal = check(results, "rummy500", wild="", seats=8)
        assert deal.score.points["p0"] == 24


# --------------------------------------------------------------- item 7: the drop-value split


def test_pool_split_by_drop_value_pays_the_extra_drops_then_equal_shares():
    t = terms("pool101", split_policy="drop_value", entry_fee=Decimal("50.00"))
    seats = [Seat("a", 20), Seat("b", 61), Seat("c", 75), Seat("d", 120, eliminated=True)]
    paid = format_of("pool101").split(Table(t, seats, Decimal("400.00"), 3))
    # 4, 1, 1 drops left: a is paid 3 x 50 first, then 210 three ways
    assert paid.fee == Decimal("40.00")
    assert paid.payouts == {"a": Decimal("220.00"), "b": Decimal("70.00"), "c": Decimal("70.00")}


# --------------------------------------------------------------- properties, as settled


@settings(max_examples=150, deadline=None)
@given(st.data(), st.sampled_from(["S0", "S1", "S3"]))
def test_settled_points_deals_keep_the_cap_and_valid_hands_pay_at_most_two(data, preset):
    rules = PRESETS[preset]
    point_value = data.draw(st.integers(1, 100_000).map(lambda n: Decimal(n) / 100))
    t = terms("points", rules=preset, point_value=point_value)
    outcomes = ["lost", "valid_second", "wrong_show", *sorted(LEFT_WITHOUT_SHOW)]
    wild = data.draw(wilds)
    results = [r("p0", "declared")]
    for n in range(1, data.draw(st.integers(1, 5)) + 1):
        outcome = data.draw(st.sampled_from(outcomes))
        _, _, groups = data.draw(groupings(rules))
        shows = outcome == "lost" or data.draw(st.booleans())
        results.append(r(f"p{n}", outcome, [card_names(g) for g in groups] if shows else None))
    # what settlement runs (tournaments.games.services.settlement._score)
    score = format_of("points").score_deal(t, wild, results)
    seats = [Seat(x["player"]) for x in results]
    collected = t.stake * len(seats)
    paid = format_of("points").apply_deal(Table(t, seats, collected, 1), results, score.points)
    assert paid.total == collected
    for x in results[1:]:
        lost = t.stake - paid.refunds[x["player"]]
        assert lost <= 80 * point_value
        if x["outcome"] in LEFT_WITHOUT_SHOW:
            fixed = {"first_drop": 20, "auto_play": 80}.get(x["outcome"], 40)
            assert lost == fixed * point_value
        elif x["groups"] and evaluate_declaration(x["groups"], wild, rules).valid:
            assert lost == 2 * point_value


def test_rummy500_adds_each_hand_to_the_running_totals():
    seats = [Seat("a"), Seat("b")]
    for hand in ({"a": 120, "b": -15}, {"a": 300, "b": 200}):
        format_of("rummy500").apply_deal(Table(terms("rummy500"), seats, Decimal(200), 1), [], hand)
    totals = {seat.external_id: seat.score for seat in seats}
    assert totals == {"a": 420, "b": 185}
