"""Points for each way a player's deal can end (RULES.md "Points at the end of a deal")."""

from __future__ import annotations

from enum import StrEnum

from .declaration import Groups, loser_points
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


class OutcomeError(ValueError):
    """An outcome the rules do not allow (unknown name, a drop where drops are barred, ...)."""


def outcome_points(
    outcome: str | Outcome,
    rules: RuleSet = DEFAULT,
    *,
    groups: Groups | None = None,
    wild_joker: str | int | None = None,
) -> int:
    """Points one player takes from a deal; ``lost`` needs the player's groups."""
    try:
        o = Outcome(outcome)
    except ValueError:
        raise OutcomeError(f"unknown outcome {outcome!r} (known: {', '.join(OUTCOMES)})") from None
    if o is Outcome.DECLARED:
        return 0
    if o is Outcome.LOST:
        if groups is None:
            raise OutcomeError("a 'lost' outcome needs the player's groups")
        return loser_points(groups, wild_joker, rules)
    if o is Outcome.VALID_SECOND:
        return rules.valid_second_points
    if o is Outcome.WRONG_SHOW:
        return rules.wrong_show_points
    if o in (Outcome.FIRST_DROP, Outcome.MIDDLE_DROP) and not rules.drops_allowed:
        raise OutcomeError(f"'{o}' is not allowed: these rules allow no drop")
    if o is Outcome.FIRST_DROP:
        return rules.first_drop_points
    if o is Outcome.AUTO_PLAY:
        return rules.auto_play_points
    return rules.middle_drop_points  # middle_drop, timeout, left
