"""Drops in Deals games (pure, no database): none in best of 2 and 3, best of 6 drops at 20/40;
and the N a deals game may be (2, 3 or 6: docs/rules.md "Deals rummy (best of N)") unless a template
names another in its rules."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.builders import WINNER
from tests.tournaments.test_deal_rules import check, r, refused, terms
from tournaments.errors import TermsInvalid
from tournaments.games.terms import GameTerms
from tournaments.rummy import PRESETS, RuleSet, RuleSetError

DROPS = {"first_drop": 20, "middle_drop": 40}


@pytest.mark.parametrize("outcome", DROPS)
def test_best_of_6_allows_drops_at_20_and_40(outcome):
    _, deal = check([r("a", "declared", WINNER), r("b", outcome)], "deals", deals=6)
    assert deal.score.points == {"a": 0, "b": DROPS[outcome]}


@pytest.mark.parametrize("deals", [2, 3])
@pytest.mark.parametrize("outcome", DROPS)
def test_best_of_2_and_3_refuse_drops(outcome, deals):
    results = [r("a", "declared", WINNER), r("b", outcome)]
    assert refused(results, "deals", deals=deals) == "drop_not_allowed"


@given(
    deals=st.sampled_from([2, 3, 6]),
    preset=st.sampled_from(sorted(PRESETS)),
    outcome=st.sampled_from(sorted(DROPS)),
)
def test_a_drop_is_accepted_exactly_outside_best_of_2_and_3_whatever_the_preset(
    deals, preset, outcome
):
    # Choosing S1 or S3 for a deals template is not an override of the deals rules. (The other
    # player dropped, so the winner wins without a show under any preset.)
    results = [r("a", "declared"), r("b", outcome)]
    if deals in (2, 3):
        assert refused(results, "deals", deals=deals, rules=preset) == "drop_not_allowed"
    else:
        t, deal = check(results, "deals", deals=deals, rules=preset)
        drop = {"first_drop": t.rules.first_drop_points, "middle_drop": t.rules.middle_drop_points}
        assert deal.score.points == {"a": 0, "b": drop[outcome]}


@pytest.mark.parametrize("deals", [1, 4, 5, 7])
@pytest.mark.parametrize("rules", [None, "S1", "S3", {"preset": "S3", "ace_points": 1}])
def test_deals_terms_accept_only_2_3_or_6(deals, rules):
    with pytest.raises(TermsInvalid, match="best of 2, 3, 6") as exc:
        terms("deals", deals=deals, rules=rules)
    assert exc.value.field == "deals"


@pytest.mark.parametrize("deals", [2, 3, 6])
def test_deals_terms_of_2_3_and_6_are_playable(deals):
    assert terms("deals", deals=deals).deals == deals


def test_a_template_plays_another_n_only_by_naming_it():
    # given a template that names the counts it plays
    t = terms("deals", deals=4, rules={"deal_counts": [2, 3, 4, 6]})
    assert t.deals == 4 and t.rules.deal_counts == (2, 3, 4, 6)
    # then a best of 4 is not one of the seeds' no-drop games: it drops at 20/40
    results = [r("a", "declared", WINNER), r("b", "first_drop")]
    assert check(results, "deals", deals=4, rules={"deal_counts": [4]})[1].score.points["b"] == 20
    # and a template may name the no-drop games too
    rules = {"deal_counts": [4], "no_drop_deals": [4]}
    assert refused(results, "deals", deals=4, rules=rules) == "drop_not_allowed"
    assert check(results, "deals", deals=2, rules={"no_drop_deals": []})[1].score.points["b"] == 20


@pytest.mark.parametrize("value", [[], [0], [21], [2, 2], ["2"], [True], "2,3", None, [[2]]])
def test_deal_counts_are_a_bounded_list_of_distinct_counts(value):
    with pytest.raises(RuleSetError) as exc:
        RuleSet(deal_counts=value)
    assert exc.value.field == "deal_counts"


def test_terms_survive_json_and_old_games_keep_the_rules_they_opened_with():
    t = terms("deals", deals=6, rules={"deal_counts": [2, 3, 6, 8]})
    assert GameTerms.from_json(t.to_json()) == t
    # A best-of-6 game opened before this change stored `drops_allowed: false` and no lists:
    # it loads, and keeps refusing drops (a game keeps the terms it opened with).
    stored = terms("deals", deals=6).to_json()
    for name in ("deal_counts", "no_drop_deals"):
        del stored["rules"][name]
    stored["rules"]["drops_allowed"] = False
    old = GameTerms.from_json(stored)
    assert old.rules.deal_counts == (2, 3, 6) and not old.rules.allows_drops(6)
