"""What every format answers, and the pieces they share. Pure: no Django, no I/O.

A format is asked, never branched on: how much each player stakes, the starting score, how a
posted deal is checked and scored, how a scored deal changes the standings, when the game ends
and what it pays (a `payouts.Settlement`), and whether a rejoin or a split is allowed.
The standings are the seats' `score` and `eliminated`, changed in place by `apply_deal`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from typing import Any, Protocol

from tournaments import rummy
from tournaments.errors import (
    DealInvalid,
    DealOutOfOrder,
    DealRejected,
    GameErrorCode,
    NotAllowed,
    TermsInvalid,
)
from tournaments.games.terms import GameTerms
from tournaments.payouts import Settlement
from tournaments.rummy.rules import MAX_PLAYERS, MIN_PLAYERS
from wallets.errors import WalletErrorCode


class FormatName(StrEnum):
    POINTS = "points"
    POOL101 = "pool101"
    POOL201 = "pool201"
    DEALS = "deals"
    RUMMY500 = "rummy500"


class Seat(Protocol):
    """A player's place in a game, as the formats see it (GamePlayer is one)."""

    external_id: str
    score: int
    eliminated: bool


@dataclass(frozen=True)
class Table:
    """A game in play: its terms, its seats in seat order, the money collected so far and how
    many deals have been played (the one being applied included)."""

    terms: GameTerms
    seats: Sequence[Seat]
    collected: Decimal
    deals_played: int

    def seat(self, external_id: str) -> Seat:
        return next(s for s in self.seats if s.external_id == external_id)

    @property
    def remaining(self) -> list[Seat]:
        return [s for s in self.seats if not s.eliminated]


@dataclass(frozen=True)
class DealScore:
    """A deal as the engine scores it: every player's points, and the posted outcomes the cards
    overruled (player -> (posted, scored); a valid losing hand is a second valid declaration
    whatever was posted, docs/rules.md "Points at the end of a deal")."""

    points: dict[str, int]
    reclassified: dict[str, tuple[str, str]] = field(default_factory=dict)

    def discrepancies(self, results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """What finance is shown where the game server and the engine disagree, per player:
        `claimed`/`computed` when the claimed points differ from the engine's, and
        `posted_outcome`/`scored_outcome` when the cards overruled the posted outcome. The
        engine's points are the ones settled."""
        out: dict[str, dict[str, Any]] = {}
        for r in results:
            player, claimed = r["player"], r.get("claimed_points")
            entry: dict[str, Any] = {}
            if claimed is not None and claimed != self.points[player]:
                entry.update(claimed=claimed, computed=self.points[player])
            if player in self.reclassified:
                posted, scored = self.reclassified[player]
                entry.update(posted_outcome=posted, scored_outcome=scored)
            if entry:
                out[player] = entry
        return out


@dataclass(frozen=True)
class CheckedDeal:
    """A posted deal that passed every check: results in canonical notation, and its score."""

    deal_no: int
    wild_joker: str
    results: list[dict[str, Any]]
    score: DealScore


class GameFormat:
    name: FormatName
    label: str
    default_preset = "S0"
    min_seats = MIN_PLAYERS  # 13-card rummy seats 2 to 6
    max_seats = MAX_PLAYERS

    def __repr__(self) -> str:
        return f"<format {self.name}: {self.label}>"

    # --- terms ------------------------------------------------------------------------------

    def ruleset(self, spec: Any) -> rummy.RuleSet:
        """The rules a template's spec names; the format's preset when it names none."""
        spec = spec or {}
        if isinstance(spec, dict) and "preset" not in spec:
            spec = {"preset": self.default_preset, **spec}
        try:
            return rummy.rules_from_spec(spec)
        except rummy.RuleSetError as exc:
            raise TermsInvalid("rules", str(exc)) from exc

    def stake(
        self, *, point_value: Decimal | None, entry_fee: Decimal | None, rules: rummy.RuleSet
    ) -> Decimal:
        """What each player puts into escrow on joining: the entry fee, by default."""
        if entry_fee is None or entry_fee <= 0:
            raise TermsInvalid("entry_fee", f"a {self.name} game needs an entry fee above zero")
        return entry_fee

    def check_terms(self, terms: GameTerms) -> None:
        if not self.min_seats <= terms.seats <= self.max_seats:
            raise TermsInvalid(
                "seats", f"a {self.name} table seats {self.min_seats} to {self.max_seats}"
            )

    def deal_count(self, deals: int | None) -> int | None:
        """How many deals the game plays, when the format fixes it (deals: best of N)."""
        return None

    def opening_score(self, terms: GameTerms) -> int:
        return 0

    # --- deals ------------------------------------------------------------------------------

    def check_deal(
        self,
        *,
        terms: GameTerms,
        players: Sequence[str],
        eliminated: Iterable[str],
        expected_no: int,
        payload: dict[str, Any],
    ) -> CheckedDeal:
        """Check a posted deal against the game; raise the first problem found."""
        if payload["deal_no"] != expected_no:
            raise DealOutOfOrder(
                f"deal {payload['deal_no']} is out of order: the next deal is {expected_no}",
                details={"expected": expected_no, "got": payload["deal_no"]},
            )
        results = payload["results"]
        check_players([r["player"] for r in results], players, set(eliminated))
        wild, canonical = self.canonical(payload)
        self.check_hands(terms, canonical, wild)
        score = self.score_deal(terms, wild, canonical)
        return CheckedDeal(payload["deal_no"], wild, canonical, score)

    def canonical(self, payload: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
        """The wild joker and the results in canonical card notation."""
        raise NotImplementedError

    def check_hands(self, terms: GameTerms, results: list[dict[str, Any]], wild: str) -> None:
        raise NotImplementedError

    def score_deal(self, terms: GameTerms, wild: str, results: list[dict[str, Any]]) -> DealScore:
        """Every player's points for the deal, by the engine; deterministic, so settling the
        stored deal later gives exactly what the check saw."""
        raise NotImplementedError

    def apply_deal(
        self, table: Table, results: list[dict[str, Any]], points: dict[str, int]
    ) -> Settlement | None:
        """Change the standings by a scored deal; what the game pays if it is over, else None."""
        raise NotImplementedError

    # --- between deals ----------------------------------------------------------------------

    def allows_rejoin(self, terms: GameTerms) -> bool:
        return False

    def rejoin_score(self, table: Table, seat: Seat) -> int:
        """The score an eliminated player re-enters with (NotAllowed when they may not)."""
        raise NotAllowed("this game allows no rejoin", code=GameErrorCode.REJOIN_NOT_ALLOWED)

    def allows_split(self, terms: GameTerms) -> bool:
        return False

    def split(self, table: Table) -> Settlement:
        """What each remaining player gets when they agree to share the prize (or NotAllowed)."""
        raise NotAllowed("this game allows no split", code=GameErrorCode.SPLIT_NOT_ALLOWED)


def check_players(posted: list[str], players: Sequence[str], eliminated: set[str]) -> None:
    """Every player still in the game has exactly one result, and no one else has any."""
    if len(set(posted)) != len(posted):
        dupes = sorted({p for p in posted if posted.count(p) > 1})
        raise DealInvalid("a player has two results", details={"players": dupes})
    unknown = [p for p in posted if p not in players]
    if unknown:
        raise DealRejected(
            f"not players of this game: {', '.join(unknown)}",
            code=WalletErrorCode.UNKNOWN_PLAYER,
            details={"players": unknown},
        )
    out = [p for p in posted if p in eliminated]
    if out:
        raise DealRejected(
            f"no longer in the game: {', '.join(out)}",
            code=GameErrorCode.PLAYER_ELIMINATED,
            details={"players": out},
        )
    missing = [p for p in players if p not in eliminated and p not in posted]
    if missing:
        raise DealRejected(
            f"every player still in the game needs a result; missing: {', '.join(missing)}",
            code=GameErrorCode.MISSING_PLAYER,
            details={"players": missing},
        )


def card(token: Any, where: str) -> str:
    """One card in canonical notation, or DealInvalid naming it."""
    try:
        return rummy.card_name(rummy.parse_card(token))
    except (rummy.CardError, TypeError) as exc:
        raise DealInvalid(
            f"unknown card {token!r} in {where}",
            code=GameErrorCode.INVALID_CARD,
            details={"card": token},
        ) from exc


def check_deck_count(players: int, errors_for: Callable[[int], list[str]]) -> None:
    """Refuse a deal that shows more copies of a card than the decks dealt to a table of
    `players` hold; `errors_for(players)` is the engine's count (ValueError: no table of that
    size is dealt)."""
    try:
        errors = errors_for(players)
    except ValueError as exc:
        raise DealRejected(str(exc), details={"players": players}) from exc
    if errors:
        raise DealRejected(
            "more copies of a card than the decks hold",
            code=GameErrorCode.TOO_MANY_COPIES,
            details={"errors": errors},
        )


def refuse_foreign_fields(result: dict[str, Any], fields: Sequence[str], own: str) -> None:
    """A result carrying another format's fields is refused, not read as an empty hand (13-card
    `groups` in a Rummy 500 deal used to be ignored and score zero). `own` says what it takes."""
    foreign = [name for name in fields if result.get(name) is not None]
    if foreign:
        raise DealInvalid(
            f"{result['player']}: {', '.join(foreign)} is not part of this format's results; {own}",
            details={"player": result["player"], "fields": foreign},
        )
