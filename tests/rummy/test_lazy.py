"""Reasons and errors are worded only when read, and read the same whichever way they are read."""

from hypothesis import given, settings

from tournaments.rummy import (
    PRESETS,
    Evaluation,
    GroupResult,
    best_arrangement,
    classify_group,
    evaluate_declaration,
)
from tournaments.rummy import groups as groups_module

from .test_properties import groupings

BROKEN = [["7S", "8S", "9C", "10S"], ["3S", "3H", "6D"], ["KD", "KC"], ["2H"]]


def test_scoring_words_nothing(monkeypatch):
    def boom(*args):
        raise AssertionError("a reason was worded")

    monkeypatch.setattr(groups_module, "invalid_reason", boom)
    ev = evaluate_declaration(BROKEN, "5C", PRESETS["S0"])
    assert (ev.valid, ev.points) == (False, 68)
    assert [g.kind for g in ev.groups] == ["invalid", "invalid", "invalid", "invalid"]
    best = best_arrangement([c for g in BROKEN for c in g], "5C")
    assert not best.valid


@settings(max_examples=300, deadline=None)
@given(groupings())
def test_lazy_words_match_eager_ones(case):
    rules, wild, groups = case
    errors_first = evaluate_declaration(groups, wild, rules)
    errors = list(errors_first.errors)
    groups_first = evaluate_declaration(groups, wild, rules)
    results = groups_first.groups
    assert groups_first.errors == errors
    for g, res in zip(groups, results, strict=True):
        alone = classify_group(g, wild, rules)
        assert (res.cards, res.kind, res.reason) == (alone.cards, alone.kind, alone.reason)
        assert res == alone and tuple(res) == (alone.cards, alone.kind, alone.reason)
    # Same content as an eagerly built value (the public constructor), and still unpacks.
    eager = Evaluation(
        errors_first.valid,
        errors_first.points,
        [GroupResult(r.cards, r.kind, r.reason) for r in results],
        errors,
    )
    assert eager == errors_first == groups_first
    assert eager.to_dict() == errors_first.to_dict() == groups_first.to_dict()
    valid, points, got_groups, got_errors = groups_first
    assert got_groups is results
    assert (valid, points, got_errors) == (eager.valid, eager.points, errors)
    assert repr(eager) == repr(groups_first)
