"""Pure 13-card rummy and Rummy 500 rules engine: no Django, no I/O, deterministic."""

from .arrange import best_arrangement, can_declare
from .cards import PJ, CardError, card_name, card_names, parse_card, parse_cards
from .declaration import (
    Evaluation,
    card_values,
    deck_count_errors,
    evaluate_declaration,
    loser_points,
)
from .groups import (
    IMPURE_SEQUENCE,
    INVALID,
    JOKERS,
    PURE_SEQUENCE,
    SET,
    GroupResult,
    classify_group,
    wild_rank,
)
from .outcomes import OUTCOMES, Outcome, OutcomeError, Scored, outcome_points, score_result
from .rules import (
    DEFAULT,
    PRESETS,
    RuleSet,
    RuleSetError,
    can_rejoin,
    is_eliminated,
    override_kinds,
    rejoin_score,
    rules_from_spec,
)

__all__ = [
    "DEFAULT",
    "IMPURE_SEQUENCE",
    "INVALID",
    "JOKERS",
    "OUTCOMES",
    "PJ",
    "PRESETS",
    "PURE_SEQUENCE",
    "SET",
    "CardError",
    "Evaluation",
    "GroupResult",
    "Outcome",
    "OutcomeError",
    "RuleSet",
    "RuleSetError",
    "Scored",
    "best_arrangement",
    "can_declare",
    "can_rejoin",
    "card_name",
    "card_names",
    "card_values",
    "classify_group",
    "deck_count_errors",
    "evaluate_declaration",
    "is_eliminated",
    "loser_points",
    "outcome_points",
    "override_kinds",
    "parse_card",
    "parse_cards",
    "rejoin_score",
    "rules_from_spec",
    "score_result",
    "wild_rank",
]
