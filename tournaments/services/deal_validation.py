"""The synchronous checks of a posted deal, and scoring it with the rules engine.

Everything here is decided before anything is stored: a deal that fails a check is answered with
a 4xx and leaves no trace. Scoring (`deal_points`) is deterministic, so the settlement task
re-scores the stored deal and gets exactly what the check saw.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rummy_ledger.errors import Conflict, DomainError, Unprocessable
from tournaments import rummy
from tournaments.models import Format
from tournaments.rummy import rummy500
from tournaments.services.terms import game_ruleset

DROP_OUTCOMES = {"first_drop", "middle_drop", "timeout", "left"}
HAND_SIZE = 13


class DealInvalid(DomainError):
    code = "invalid_deal"


class DealRejected(Unprocessable):
    code = "deal_rejected"


class DealOutOfOrder(Conflict):
    code = "deal_out_of_order"


@dataclass(frozen=True)
class CheckedDeal:
    deal_no: int
    wild_joker: str
    results: list[dict[str, Any]]
    points: dict[str, int]


def deal_check(
    *,
    terms: dict[str, Any],
    players: Sequence[str],
    eliminated: Iterable[str],
    expected_no: int,
    payload: dict[str, Any],
) -> CheckedDeal:
    """Check a posted deal against the game; raise the first problem found (nothing stored)."""
    if payload["deal_no"] != expected_no:
        raise DealOutOfOrder(
            f"deal {payload['deal_no']} is out of order: the next deal is {expected_no}",
            details={"expected": expected_no, "got": payload["deal_no"]},
        )
    results = payload["results"]
    _check_players([r["player"] for r in results], players, set(eliminated))
    if terms["format"] == Format.RUMMY500:
        canonical = [_r500_canonical(r) for r in results]
        _check_decks_r500(canonical, len(results))
        wild = ""
    else:
        rules = game_ruleset(terms)
        wild = _card(payload.get("wild_joker") or "", "wild_joker")
        canonical = [_canonical13(r) for r in results]
        _check_hands13(canonical, wild, rules)
    points = deal_points(terms=terms, wild_joker=wild, results=canonical)
    return CheckedDeal(payload["deal_no"], wild, canonical, points)


def _check_players(posted: list[str], players: Sequence[str], eliminated: set[str]) -> None:
    if len(set(posted)) != len(posted):
        dupes = sorted({p for p in posted if posted.count(p) > 1})
        raise DealInvalid("a player has two results", details={"players": dupes})
    unknown = [p for p in posted if p not in players]
    if unknown:
        raise DealRejected(
            f"not players of this game: {', '.join(unknown)}",
            code="unknown_player",
            details={"players": unknown},
        )
    out = [p for p in posted if p in eliminated]
    if out:
        raise DealRejected(
            f"no longer in the game: {', '.join(out)}",
            code="player_eliminated",
            details={"players": out},
        )
    missing = [p for p in players if p not in eliminated and p not in posted]
    if missing:
        raise DealRejected(
            f"every player still in the game needs a result; missing: {', '.join(missing)}",
            code="missing_player",
            details={"players": missing},
        )


def _card(token: Any, where: str) -> str:
    try:
        return rummy.card_name(rummy.parse_card(token))
    except (rummy.CardError, TypeError) as exc:
        raise DealInvalid(
            f"unknown card {token!r} in {where}", code="invalid_card", details={"card": token}
        ) from exc


def _cards(tokens: Iterable[Any], where: str) -> list[str]:
    return [_card(t, where) for t in tokens]


def _canonical13(result: dict[str, Any]) -> dict[str, Any]:
    groups = result.get("groups")
    player = result["player"]
    if not result.get("outcome"):
        raise DealInvalid(f"{player}: an outcome is required", details={"player": player})
    return {
        "player": player,
        "outcome": result["outcome"],
        "groups": None if groups is None else [_cards(g, player) for g in groups],
        "claimed_points": result.get("claimed_points"),
    }


def _check_hands13(results: list[dict[str, Any]], wild: str, rules: rummy.RuleSet) -> None:
    seen = [wild]
    for r in results:
        if r["groups"] is None:
            if r["outcome"] in ("lost",):
                raise DealInvalid(
                    f"{r['player']}: a '{r['outcome']}' result needs its groups",
                    code="groups_required",
                    details={"player": r["player"]},
                )
            continue
        count = sum(len(g) for g in r["groups"])
        if count != HAND_SIZE:
            raise DealRejected(
                f"{r['player']} shows {count} cards; a hand has {HAND_SIZE}",
                code="hand_size",
                details={"player": r["player"], "cards": count},
            )
        seen += [c for g in r["groups"] for c in g]
    errors = rummy.deck_count_errors(seen, rules)
    if errors:
        raise DealRejected(
            "more copies of a card than the decks hold",
            code="too_many_copies",
            details={"errors": errors},
        )
    if not rules.drops_allowed:
        drops = [r["player"] for r in results if r["outcome"] in ("first_drop", "middle_drop")]
        if drops:
            raise DealRejected(
                "this format allows no drop",
                code="drop_not_allowed",
                details={"players": drops},
            )
    winners = [r for r in results if r["outcome"] == "declared"]
    if len(winners) != 1:
        raise DealRejected(
            f"a deal has exactly one declared winner, got {len(winners)}",
            code="winner_count",
            details={"players": [w["player"] for w in winners]},
        )
    winner = winners[0]
    others_dropped = all(r["outcome"] in DROP_OUTCOMES for r in results if r is not winner)
    if winner["groups"] is None:
        if not others_dropped:
            raise DealRejected(
                "the winner must show the declared hand unless everyone else dropped",
                code="declaration_missing",
                details={"player": winner["player"]},
            )
    else:
        _require_valid(winner, wild, rules, "invalid_declaration")
    for r in results:
        if r["outcome"] == "valid_second" and r["groups"] is not None:
            _require_valid(r, wild, rules, "invalid_second_declaration")


def _require_valid(result: dict[str, Any], wild: str, rules: rummy.RuleSet, code: str) -> None:
    ev = rummy.evaluate_declaration(result["groups"], wild, rules)
    if not ev.valid:
        raise DealRejected(
            f"{result['player']}'s declaration is not valid: {'; '.join(ev.errors)}",
            code=code,
            details={"player": result["player"], "reasons": ev.errors},
        )


def _joker_token(token: Any, where: str) -> str:
    try:
        code, named = rummy500.parse_joker(token)
    except (rummy.CardError, TypeError) as exc:
        raise DealInvalid(
            f"unknown card {token!r} in {where}", code="invalid_card", details={"card": token}
        ) from exc
    name = rummy.card_name(code)
    return f"{name}={rummy.card_name(named)}" if named is not None else name


def _r500_canonical(result: dict[str, Any]) -> dict[str, Any]:
    player = result["player"]
    melded = [[_joker_token(t, player) for t in m] for m in result.get("melded") or []]
    laid_off: list[Any] = []
    for item in result.get("laid_off") or []:
        if isinstance(item, list):
            if len(item) != 2 or not isinstance(item[1], list):
                raise DealInvalid(
                    f"{player}: a laid-off card is a card or [card, [meld]]",
                    details={"player": player},
                )
            laid_off.append(
                [_joker_token(item[0], player), [_joker_token(t, player) for t in item[1]]]
            )
        else:
            laid_off.append(_joker_token(item, player))
    for meld in melded:
        try:
            rummy500.meld_kind(meld)
        except rummy500.MeldError as exc:
            raise DealRejected(
                f"{player}: {' '.join(meld)} is not a meld: {exc}",
                code="invalid_meld",
                details={"player": player, "meld": meld, "reason": str(exc)},
            ) from exc
    return {
        "player": player,
        "outcome": result.get("outcome"),
        "melded": melded,
        "laid_off": laid_off,
        "in_hand": [_joker_token(t, player) for t in result.get("in_hand") or []],
        "claimed_points": result.get("claimed_points"),
    }


def _check_decks_r500(results: list[dict[str, Any]], n_players: int) -> None:
    decks = 2 if n_players >= 5 else 1
    counts: dict[str, int] = {}
    for r in results:
        cards = [c for m in r["melded"] for c in m] + r["in_hand"]
        cards += [item[0] if isinstance(item, list) else item for item in r["laid_off"]]
        for c in cards:
            key = c.split("=")[0]
            counts[key] = counts.get(key, 0) + 1
    errors = [
        f"{card} appears {k} times; {decks} deck(s) hold {decks * (2 if card == 'PJ' else 1)}"
        for card, k in sorted(counts.items())
        if k > decks * (2 if card == "PJ" else 1)
    ]
    if errors:
        raise DealRejected(
            "more copies of a card than the decks hold",
            code="too_many_copies",
            details={"errors": errors},
        )


def deal_points(
    *, terms: dict[str, Any], wild_joker: str, results: list[dict[str, Any]]
) -> dict[str, int]:
    """Every player's points for the deal, by the engine (Rummy 500: the hand's score)."""
    if terms["format"] == Format.RUMMY500:
        out = {}
        for r in results:
            laid = [(i[0], i[1]) if isinstance(i, list) else i for i in r["laid_off"]]
            out[r["player"]] = rummy500.score_hand(r["melded"], laid, r["in_hand"])
        return out
    rules = game_ruleset(terms)
    points = {}
    for r in results:
        try:
            points[r["player"]] = rummy.outcome_points(
                r["outcome"], rules, groups=r["groups"], wild_joker=wild_joker
            )
        except rummy.OutcomeError as exc:
            raise DealRejected(str(exc), details={"player": r["player"]}) from exc
    return points
