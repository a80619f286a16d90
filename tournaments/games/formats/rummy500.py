"""Rummy 500: each hand scores melded value minus the value left in hand; totals race past
500 and the highest total wins the pool (a tie plays another hand). Pure: no Django."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tournaments.errors import DealInvalid, DealRejected, GameErrorCode
from tournaments.games.formats.base import (
    DealScore,
    FormatName,
    GameFormat,
    Table,
    check_deck_count,
    refuse_foreign_fields,
)
from tournaments.games.terms import GameTerms
from tournaments.payouts import Settlement, prize_settlement
from tournaments.rummy import CardError, card_name, jokers500, rummy500


class Rummy500(GameFormat):
    name = FormatName.RUMMY500
    label = "Rummy 500"
    min_seats = rummy500.MIN_PLAYERS
    max_seats = rummy500.MAX_PLAYERS  # 2 to 8, two decks from 5

    def canonical(self, payload: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
        """Results in canonical notation with every joker fixed as it was melded: the
        melds first, then each lay-off against the melds on the table."""
        results = [_canonical(r) for r in payload["results"]]
        table = [m for r in results for m in r["melded"]]
        for r in results:
            r["laid_off"] = [_laid_off(r["player"], item, table) for item in r["laid_off"]]
        return "", results

    def check_hands(self, terms: GameTerms, results: list[dict[str, Any]], wild: str) -> None:
        """No card seen more often than the table's decks hold (two decks from 5 players)."""
        cards = []
        for r in results:
            cards += [c for m in r["melded"] for c in m] + r["in_hand"]
            cards += [item[0] if isinstance(item, list) else item for item in r["laid_off"]]
        check_deck_count(len(results), lambda n: rummy500.deck_count_errors(cards, n))

    def score_deal(self, terms: GameTerms, wild: str, results: list[dict[str, Any]]) -> DealScore:
        points = {}
        for r in results:
            laid = [(i[0], i[1]) if isinstance(i, list) else i for i in r["laid_off"]]
            points[r["player"]] = rummy500.score_hand(r["melded"], laid, r["in_hand"])
        return DealScore(points)

    def apply_deal(
        self, table: Table, results: list[dict[str, Any]], points: dict[str, int]
    ) -> Settlement | None:
        for ext, pts in points.items():
            table.seat(ext).score += pts
        winner = rummy500.game_result({s.external_id: s.score for s in table.remaining})
        if winner is None:
            return None
        return prize_settlement(
            prize=table.collected, winner=winner, fee_percent=table.terms.fee_percent
        )


def _joker_token(token: Any, where: str) -> str:
    try:
        code, named = rummy500.parse_joker(token)
    except (CardError, TypeError) as exc:
        raise DealInvalid(
            f"unknown card {token!r} in {where}",
            code=GameErrorCode.INVALID_CARD,
            details={"card": token},
        ) from exc
    name = card_name(code)
    return f"{name}={card_name(named)}" if named is not None else name


def _canonical(result: dict[str, Any]) -> dict[str, Any]:
    player = result["player"]
    refuse_foreign_fields(result, ("groups",), "a Rummy 500 result shows melded, laid_off, in_hand")
    melded = [_melded(player, m) for m in result.get("melded") or []]
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
    return {
        "player": player,
        "outcome": result.get("outcome"),
        "melded": melded,
        "laid_off": laid_off,
        "in_hand": [_joker_token(t, player) for t in result.get("in_hand") or []],
        "claimed_points": result.get("claimed_points"),
    }


def _melded(player: str, meld: list[Any]) -> list[str]:
    """A melded meld, canonical with its jokers fixed (parsed once: most melds hold none)."""
    try:
        return _fixed(player, meld, jokers500.fix_meld, meld)
    except (CardError, TypeError):
        for t in meld:
            _joker_token(t, player)  # raises, naming the card
        raise


def _laid_off(player: str, item: Any, table: list[list[str]]) -> Any:
    """A lay-off ``[card, [meld]]`` with its jokers fixed; a bare laid-off card as it is."""
    if not isinstance(item, list):
        return item
    card, target = item
    return list(_fixed(player, target, jokers500.fix_lay_off, card, target, table, laid=card))


def _fixed(
    player: str, meld: list[Any], fix: Callable[..., Any], *args: Any, laid: str | None = None
) -> Any:
    """``fix(*args)``, or the refusal naming the player, the meld (and the card ``laid`` off on
    it) and, when it is the cause, the joker (`joker_not_named`, `joker_fixed`; else
    `invalid_meld`)."""
    try:
        return fix(*args)
    except rummy500.MeldError as exc:
        shown = " ".join(map(str, meld))
        what = f"{laid} cannot be laid off on {shown}" if laid else f"{shown} is not a meld"
        if isinstance(exc, jokers500.JokerNotFixed):
            code = GameErrorCode.JOKER_NOT_NAMED
            joker = {"joker": "PJ", "place": exc.place, "could_be": exc.could_be}
        elif isinstance(exc, jokers500.JokerChanged):
            code, joker = GameErrorCode.JOKER_FIXED, {"joker": exc.joker, "melded": exc.meld}
        else:
            code, joker = GameErrorCode.INVALID_MELD, {}
        raise DealRejected(
            f"{player}: {what}: {exc}",
            code=code,
            details={"player": player, "meld": meld, "reason": str(exc), **joker},
        ) from exc


RUMMY500 = Rummy500()
