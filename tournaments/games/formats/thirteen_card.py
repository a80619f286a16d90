"""What the 13-card formats (points, pool, deals) share: a posted deal's hands, checked and
scored by the rules engine. Pure: no Django.

Every deal has one winner, posted `declared`. The winner shows the declared hand, except when
every other player is out of the deal (wrong show, drop, timeout, left, auto-play): the last
player standing wins without showing (docs/rules.md; at a 2-player table one wrong show
ends the deal). A winner who does send groups is checked all the same.

Scoring follows the cards where a hand was shown at the end (`rummy.score_result`: a valid
losing hand scores 2 whatever was posted, and the deal records the reclassification). A player
who left the deal without a show (`LEFT_WITHOUT_SHOW`) pays that outcome's fixed points whatever
cards are posted with it: a drop forfeits the deal at the price the rules set (20/40, 25/50),
so the cards the player held are not a declaration and cannot lower that price.
"""

from __future__ import annotations

from typing import Any

from tournaments import rummy
from tournaments.errors import DealInvalid, DealRejected, GameErrorCode
from tournaments.games.formats.base import (
    DealScore,
    GameFormat,
    card,
    check_deck_count,
    refuse_foreign_fields,
)
from tournaments.games.terms import GameTerms

LEFT_WITHOUT_SHOW = frozenset({"first_drop", "middle_drop", "timeout", "left", "auto_play"})
OUT_OF_DEAL = LEFT_WITHOUT_SHOW | {"wrong_show"}  # the deal goes on (or ends) without them
HAND_SIZE = 13


class ThirteenCardFormat(GameFormat):
    def canonical(self, payload: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
        wild = card(payload.get("wild_joker") or "", "wild_joker")
        return wild, [_canonical(r) for r in payload["results"]]

    def check_hands(self, terms: GameTerms, results: list[dict[str, Any]], wild: str) -> None:
        rules = terms.rules
        _check_cards(results, wild, rules)
        if not rules.allows_drops(terms.deals):
            drops = [r["player"] for r in results if r["outcome"] in ("first_drop", "middle_drop")]
            if drops:
                best_of = f" (best of {terms.deals})" if terms.deals else ""
                raise DealRejected(
                    f"this game{best_of} allows no drop",
                    code=GameErrorCode.DROP_NOT_ALLOWED,
                    details={"players": drops},
                )
        winners = [r for r in results if r["outcome"] == "declared"]
        if len(winners) != 1:
            raise DealRejected(
                f"a deal has exactly one declared winner, got {len(winners)}",
                code=GameErrorCode.WINNER_COUNT,
                details={"players": [w["player"] for w in winners]},
            )
        winner = winners[0]
        if winner["groups"] is None:
            _check_last_standing(winner, results, wild, rules)
        else:
            _require_valid(winner, wild, rules, GameErrorCode.INVALID_DECLARATION)
        for r in results:
            if r["outcome"] == "valid_second" and r["groups"] is not None:
                _require_valid(r, wild, rules, GameErrorCode.INVALID_SECOND_DECLARATION)

    def score_deal(self, terms: GameTerms, wild: str, results: list[dict[str, Any]]) -> DealScore:
        points: dict[str, int] = {}
        reclassified: dict[str, tuple[str, str]] = {}
        for r in results:
            shown = None if r["outcome"] in LEFT_WITHOUT_SHOW else r["groups"]
            try:
                scored = rummy.score_result(
                    r["outcome"], terms.rules, groups=shown, wild_joker=wild, deals=terms.deals
                )
            except rummy.OutcomeError as exc:
                raise DealRejected(str(exc), details={"player": r["player"]}) from exc
            points[r["player"]] = scored.points
            if scored.reclassified:
                reclassified[r["player"]] = (str(scored.posted), str(scored.outcome))
        return DealScore(points, reclassified)


def winner(results: list[dict[str, Any]]) -> str:
    """The player who declared (a stored deal always has exactly one)."""
    return next(r["player"] for r in results if r["outcome"] == "declared")


def _canonical(result: dict[str, Any]) -> dict[str, Any]:
    groups = result.get("groups")
    player = result["player"]
    if not result.get("outcome"):
        raise DealInvalid(f"{player}: an outcome is required", details={"player": player})
    refuse_foreign_fields(
        result, ("melded", "laid_off", "in_hand"), "a 13-card result shows its groups"
    )
    return {
        "player": player,
        "outcome": result["outcome"],
        "groups": None if groups is None else [[card(t, player) for t in g] for g in groups],
        "claimed_points": result.get("claimed_points"),
    }


def _check_cards(results: list[dict[str, Any]], wild: str, rules: rummy.RuleSet) -> None:
    """Every shown hand has 13 cards, and no card is seen more often than the decks dealt to
    this many players hold (S1: 3 decks from 4 players). The players dealt in are the results:
    eliminated pool players and those sitting out a tie-break deal are not at the table."""
    seen = [wild]
    for r in results:
        if r["groups"] is None:
            if r["outcome"] == "lost":
                raise DealInvalid(
                    f"{r['player']}: a 'lost' result needs its groups",
                    code=GameErrorCode.GROUPS_REQUIRED,
                    details={"player": r["player"]},
                )
            continue
        count = sum(len(g) for g in r["groups"])
        if count != HAND_SIZE:
            raise DealRejected(
                f"{r['player']} shows {count} cards; a hand has {HAND_SIZE}",
                code=GameErrorCode.HAND_SIZE,
                details={"player": r["player"], "cards": count},
            )
        seen += [c for g in r["groups"] for c in g]
    check_deck_count(len(results), lambda n: rummy.deck_count_errors(seen, rules, players=n))


def _check_last_standing(
    winner: dict[str, Any], results: list[dict[str, Any]], wild: str, rules: rummy.RuleSet
) -> None:
    """A winner who shows no hand won because everyone else is out of the deal; and no one
    else's show may turn out to be the valid declaration that would have won it."""
    others = [r for r in results if r is not winner]
    standing = [r["player"] for r in others if r["outcome"] not in OUT_OF_DEAL]
    if standing:
        raise DealRejected(
            "the winner must show the declared hand unless every other player is out of the "
            f"deal (wrong show, drop, timeout, left, auto-play); still in: {', '.join(standing)}",
            code=GameErrorCode.DECLARATION_MISSING,
            details={"player": winner["player"], "players": standing},
        )
    shows = [r for r in others if r["outcome"] == "wrong_show" and r["groups"] is not None]
    for r in shows:
        if rummy.evaluate_declaration(r["groups"], wild, rules).valid:
            raise DealRejected(
                f"{r['player']}'s wrong show is a valid declaration, so "
                f"{winner['player']} cannot have won the deal without a show",
                code=GameErrorCode.WRONG_SHOW_VALID,
                details={"player": r["player"], "winner": winner["player"]},
            )


def _require_valid(result: dict[str, Any], wild: str, rules: rummy.RuleSet, code) -> None:
    ev = rummy.evaluate_declaration(result["groups"], wild, rules)
    if not ev.valid:
        raise DealRejected(
            f"{result['player']}'s declaration is not valid: {'; '.join(ev.errors)}",
            code=code,
            details={"player": result["player"], "reasons": ev.errors},
        )
