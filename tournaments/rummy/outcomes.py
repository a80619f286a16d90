"""Points for each way a player's deal can end (docs/rules.md "Points at the end of a deal").

The game server posts an outcome; the cards, when it sends them, have the last word: a hand that
forms a valid declaration is a second valid declaration (2 points, S0) whatever was posted, and a
declaration the cards do not bear out is a wrong show. ``score_result`` says when that happened,
so the settlement can record the difference for finance instead of silently trusting either.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .declaration import Groups, evaluate_declaration
from .rules import DEFAULT, RuleSet


class Outcome(StrEnum):
    DECLARED = "declared"
    LOST = "lost"
    VALID_SECOND = "valid_second"
    WRONG_SHOW = "wrong_show"
    FIRST_DROP = "first_drop"
    MIDDLE_DROP = "middle_drop"
    TIMEOUT = "timeout"  # missed 3 turns in a row: a middle drop
    LEFT = "left"  # left the table after picking a card: a middle drop
    AUTO_PLAY = "auto_play"  # disconnected, another player showed meanwhile: full count


OUTCOMES = tuple(o.value for o in Outcome)
_DECLARATIONS = (Outcome.DECLARED, Outcome.VALID_SECOND)


class OutcomeError(ValueError):
    """An outcome the rules do not allow (unknown name, a drop where drops are barred, ...)."""


@dataclass(frozen=True, slots=True)
class Scored:
    """One player's deal as the cards bear it out: ``outcome`` differs from ``posted`` when the
    posted outcome was reclassified (a valid hand posted as lost, an invalid one as declared)."""

    posted: Outcome
    outcome: Outcome
    points: int

    @property
    def reclassified(self) -> bool:
        return self.outcome is not self.posted


def score_result(
    outcome: str | Outcome,
    rules: RuleSet = DEFAULT,
    *,
    groups: Groups | None = None,
    wild_joker: str | int | None = None,
    deals: int | None = None,
) -> Scored:
    """Points one player takes from a deal, and the outcome the player's groups support.

    Without groups the posted outcome stands (``lost`` needs them). With groups: a valid
    13-card declaration is ``declared`` (0) if so posted, else ``valid_second`` (2, never more);
    an invalid one posted as a declaration is a ``wrong_show``; any other outcome stands.
    ``deals``: a Deals game's N (best of 2 and 3 allow no drop).
    """
    try:
        posted = Outcome(outcome)
    except ValueError:
        raise OutcomeError(f"unknown outcome {outcome!r} (known: {', '.join(OUTCOMES)})") from None
    if posted in (Outcome.FIRST_DROP, Outcome.MIDDLE_DROP) and not rules.allows_drops(deals):
        best_of = f" in a best-of-{deals} deals game" if deals else ""
        raise OutcomeError(f"'{posted}' is not allowed: these rules allow no drop{best_of}")
    if groups is None:
        if posted is Outcome.LOST:
            raise OutcomeError("a 'lost' outcome needs the player's groups")
        return Scored(posted, posted, _fixed_points(posted, rules))
    ev = evaluate_declaration(groups, wild_joker, rules)
    if ev.valid:
        effective = Outcome.DECLARED if posted is Outcome.DECLARED else Outcome.VALID_SECOND
    elif posted in _DECLARATIONS:
        effective = Outcome.WRONG_SHOW
    else:
        effective = posted
    points = ev.points if effective is Outcome.LOST else _fixed_points(effective, rules)
    return Scored(posted, effective, points)


def outcome_points(
    outcome: str | Outcome,
    rules: RuleSet = DEFAULT,
    *,
    groups: Groups | None = None,
    wild_joker: str | int | None = None,
    deals: int | None = None,
) -> int:
    """Points one player takes from a deal (``score_result`` without the reclassification)."""
    return score_result(outcome, rules, groups=groups, wild_joker=wild_joker, deals=deals).points


def _fixed_points(o: Outcome, rules: RuleSet) -> int:
    """Points of an outcome that does not depend on the cards (all but ``lost``)."""
    if o is Outcome.DECLARED:
        return 0
    if o is Outcome.VALID_SECOND:
        return rules.valid_second_points
    if o is Outcome.WRONG_SHOW:
        return rules.wrong_show_points
    if o is Outcome.FIRST_DROP:
        return rules.first_drop_points
    if o is Outcome.AUTO_PLAY:
        return rules.auto_play_points
    return rules.middle_drop_points  # middle_drop, timeout, left
