"""A tournament's terms as one frozen value, validated once, and what a round's standings
qualify. Pure: no Django.

The admin, the proposal of new money terms and `manage.py create_tournament` all build a
`TournamentTerms` (this module), so they refuse the same things with the same messages:
`TermsInvalid` names the field at fault. The JSON shapes are docs/tournaments.md's:
`"rounds": [{"qualify_top": 2}, {"qualify_min_chips": 1200}, {"final": true}]`,
`"rebuy": {"price", "max_per_player", "until_round"}` or null,
`"prizes": [{"ranks": "1", "percent": "40.00"}, {"ranks": "4-6", "percent": "5.00"}]`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from tournaments.errors import TermsInvalid
from tournaments.payouts import MONEY, TICKET, PrizeRow
from wallets.money.amounts import amount_text

CASH, CHIPS = "INR", "CHP"
HUNDRED = Decimal(100)
TABLE_SIZE_MIN, TABLE_SIZE_MAX = 2, 6
MAX_PLAYERS = 100_000
MAX_ROUNDS = 20
MAX_REBUYS = 100
MAX_CHIPS = 10**12
MAX_AMOUNT = Decimal("10000000.00")  # LEDGER_MAX_TRANSFER's default: one entry or rebuy
_RANKS = re.compile(r"([1-9][0-9]{0,5})(?:-([1-9][0-9]{0,5}))?")


@dataclass(frozen=True)
class RoundRule:
    """How a round's tables qualify players for the next: the first `qualify_top` positions of
    each table, or everyone with at least `qualify_min_chips`; the final qualifies nobody."""

    qualify_top: int | None = None
    qualify_min_chips: int | None = None

    @property
    def final(self) -> bool:
        return self.qualify_top is None and self.qualify_min_chips is None

    def to_json(self) -> dict[str, Any]:
        if self.qualify_top is not None:
            return {"qualify_top": self.qualify_top}
        if self.qualify_min_chips is not None:
            return {"qualify_min_chips": self.qualify_min_chips}
        return {"final": True}


@dataclass(frozen=True)
class RebuyRule:
    price: Decimal
    max_per_player: int
    until_round: int

    def to_json(self) -> dict[str, Any]:
        return {
            "price": amount_text(self.price),
            "max_per_player": self.max_per_player,
            "until_round": self.until_round,
        }


@dataclass(frozen=True)
class TournamentTerms:
    currency: str
    entry_fee: Decimal
    fee_percent: Decimal
    guarantee: Decimal
    min_players: int
    max_players: int
    table_size: int
    bonus_cap_percent: Decimal
    rounds: tuple[RoundRule, ...]
    rebuy: RebuyRule | None
    prizes: tuple[PrizeRow, ...]

    @property
    def entry_buckets(self) -> tuple[str, ...]:
        """Where an entry is taken from, in order: as a game's by default (chips: chips)."""
        return ("chips",) if self.currency == CHIPS else ("bonus", "deposit", "winnings")

    def __post_init__(self) -> None:
        if self.currency not in (CASH, CHIPS):
            raise TermsInvalid("currency", f"must be {CASH} or {CHIPS}")
        for name in ("entry_fee", "guarantee"):
            _amount(name, getattr(self, name), allow_zero=True)
        _percent("fee_percent", self.fee_percent, below_100=True)
        _percent("bonus_cap_percent", self.bonus_cap_percent)
        if self.currency == CHIPS and self.fee_percent != 0:
            raise TermsInvalid("fee_percent", "a chips tournament's fee is 0 (chips pay no fee)")
        if self.entry_fee == 0 and self.guarantee == 0:
            raise TermsInvalid("guarantee", "a freeroll (entry fee 0) needs a guarantee")
        _count("table_size", self.table_size, TABLE_SIZE_MIN, TABLE_SIZE_MAX)
        _count("min_players", self.min_players, 2, MAX_PLAYERS)
        _count("max_players", self.max_players, self.min_players, MAX_PLAYERS)
        self._check_rounds()
        self._check_rebuy()
        self._check_prizes()

    def _check_rounds(self) -> None:
        if not 1 <= len(self.rounds) <= MAX_ROUNDS:
            raise TermsInvalid("rounds", f"1 to {MAX_ROUNDS} rounds, the last one the final")
        if not self.rounds[-1].final or any(r.final for r in self.rounds[:-1]):
            raise TermsInvalid("rounds", "the last round, and only the last, is the final")
        for rule in self.rounds[:-1]:
            if rule.qualify_top is not None and not 1 <= rule.qualify_top < self.table_size:
                raise TermsInvalid(
                    "rounds", f"qualify_top is 1 to {self.table_size - 1} (below the table size)"
                )
        if len(self.rounds) == 1 and self.max_players > self.table_size:
            raise TermsInvalid(
                "rounds", "a tournament of one round (the final) seats at most one table"
            )

    def _check_rebuy(self) -> None:
        if self.rebuy is None:
            return
        _amount("rebuy", self.rebuy.price, allow_zero=False)
        _count("rebuy", self.rebuy.max_per_player, 1, MAX_REBUYS)
        last = len(self.rounds) - 1
        if not 1 <= self.rebuy.until_round <= max(last, 1) or len(self.rounds) == 1:
            raise TermsInvalid("rebuy", f"until_round is a round before the final (1 to {last})")

    def _check_prizes(self) -> None:
        paid = prize_ranks_checked(self.prizes)
        total = Decimal(0)
        for row in self.prizes:
            if row.kind == TICKET:
                continue
            _percent("prizes", row.percent)
            if row.percent <= 0:
                raise TermsInvalid("prizes", "each paid rank gets more than 0 %")
            total += row.percent * (row.rank_to - row.rank_from + 1)
        if any(row.kind == MONEY for row in self.prizes) and total != HUNDRED:
            raise TermsInvalid("prizes", f"the percentages add up to {total}, not exactly 100")
        if paid > self.min_players:
            raise TermsInvalid(
                "prizes",
                f"a prize table may pay no more ranks than min_players ({self.min_players}), "
                f"this one pays {paid}",
            )

    @property
    def target(self) -> str | None:
        """The tournament the ticket rows pay seats in (a satellite's), or None."""
        return next((row.target for row in self.prizes if row.kind == TICKET), None)

    def rounds_json(self) -> list[dict[str, Any]]:
        return [rule.to_json() for rule in self.rounds]

    def rebuy_json(self) -> dict[str, Any] | None:
        return None if self.rebuy is None else self.rebuy.to_json()


def prize_ranks_checked(rows: Sequence[PrizeRow]) -> int:
    """What every prize table must be (a tournament's, a leaderboard's): rows from rank 1
    without gaps, ticket rows first and all to one tournament. Returns how many ranks it pays."""
    if not rows:
        raise TermsInvalid("prizes", "a prize table pays at least rank 1")
    expected = 1
    money_seen = False
    for row in rows:
        if row.rank_from != expected or row.rank_to < row.rank_from:
            raise TermsInvalid(
                "prizes",
                f"the ranks follow each other from 1 without gaps: expected {expected}",
            )
        expected = row.rank_to + 1
        if row.kind == TICKET and money_seen:
            raise TermsInvalid("prizes", "ticket rows come first, before money rows")
        money_seen = money_seen or row.kind == MONEY
    if len({row.target for row in rows if row.kind == TICKET}) > 1:
        raise TermsInvalid("prizes", "every ticket row names the same tournament")
    return expected - 1


def _amount(field: str, value: Decimal, *, allow_zero: bool) -> None:
    if not isinstance(value, Decimal) or not value.is_finite():
        raise TermsInvalid(field, "is not a decimal amount")
    if value < 0 or (value == 0 and not allow_zero) or value > MAX_AMOUNT:
        least = "0" if allow_zero else "more than 0"
        raise TermsInvalid(field, f"an amount from {least} to {MAX_AMOUNT}")
    if value != value.quantize(Decimal("0.01")):
        raise TermsInvalid(field, "has more than two decimal places")


def _percent(field: str, value: Decimal, *, below_100: bool = False) -> None:
    if not isinstance(value, Decimal) or not value.is_finite():
        raise TermsInvalid(field, "is not a decimal percentage")
    if value < 0 or value > HUNDRED or (below_100 and value == HUNDRED):
        raise TermsInvalid(field, "a percentage from 0 to " + ("below 100" if below_100 else "100"))
    if value != value.quantize(Decimal("0.01")):
        raise TermsInvalid(field, "has more than two decimal places")


def _count(field: str, value: object, low: int, high: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise TermsInvalid(field, f"a whole number from {low} to {high}")


def decimal_of(field: str, value: Any) -> Decimal:
    """A decimal from a JSON string or integer (never a float: 0.1 is not a paisa amount)."""
    if isinstance(value, bool) or not isinstance(value, (str, int, Decimal)):
        raise TermsInvalid(field, f'{value!r} is not a decimal string such as "100.00"')
    try:
        number = Decimal(value)
    except (InvalidOperation, ValueError) as exc:
        raise TermsInvalid(field, f"{value!r} is not a decimal amount") from exc
    if not number.is_finite():
        raise TermsInvalid(field, f"{value!r} is not a decimal amount")
    return number


def _keys(field: str, data: Any, allowed: set[str], required: set[str]) -> Mapping[str, Any]:
    if not isinstance(data, dict):
        raise TermsInvalid(field, f"expected an object, got {type(data).__name__}")
    if unknown := set(data) - allowed:
        raise TermsInvalid(field, f"unknown fields: {', '.join(sorted(unknown))}")
    if missing := required - set(data):
        raise TermsInvalid(field, f"missing fields: {', '.join(sorted(missing))}")
    return data


def rounds_of(data: Any) -> tuple[RoundRule, ...]:
    if not isinstance(data, list) or len(data) > MAX_ROUNDS:
        raise TermsInvalid("rounds", f"a list of 1 to {MAX_ROUNDS} rounds")
    rules = []
    for item in data:
        item = _keys("rounds", item, {"qualify_top", "qualify_min_chips", "final"}, set())
        if len(item) != 1:
            raise TermsInvalid(
                "rounds", "each round is one of qualify_top, qualify_min_chips or final"
            )
        if item.get("final") is True:
            rules.append(RoundRule())
        elif "qualify_top" in item:
            _count("rounds", item["qualify_top"], 1, TABLE_SIZE_MAX - 1)
            rules.append(RoundRule(qualify_top=item["qualify_top"]))
        elif "qualify_min_chips" in item:
            _count("rounds", item["qualify_min_chips"], 1, MAX_CHIPS)
            rules.append(RoundRule(qualify_min_chips=item["qualify_min_chips"]))
        else:
            raise TermsInvalid("rounds", 'the final is written {"final": true}')
    return tuple(rules)


def rebuy_of(data: Any) -> RebuyRule | None:
    if data is None:
        return None
    keys = {"price", "max_per_player", "until_round"}
    data = _keys("rebuy", data, keys, keys)
    for name in ("max_per_player", "until_round"):
        _count("rebuy", data[name], 1, MAX_REBUYS)
    return RebuyRule(
        decimal_of("rebuy", data["price"]), data["max_per_player"], data["until_round"]
    )


def prizes_of(data: Any, *, money: str = "percent") -> tuple[PrizeRow, ...]:
    """`{"ranks": "1-4", "percent": "25.00"}` (money) or `{"ranks": "1-4", "kind": "ticket",
    "tournament": "<slug>"}` (a seat each in that tournament). A leaderboard's money rows carry
    an `amount` per rank instead of a percent (`money="amount"`, in the row's `amount`)."""
    if not isinstance(data, list) or len(data) > 1000:
        raise TermsInvalid("prizes", "a list of at most 1000 rows")
    rows = []
    for item in data:
        ticket = isinstance(item, dict) and item.get("kind") == TICKET
        if ticket:
            keys = {"ranks", "kind", "tournament"}
            item = _keys("prizes", item, keys, keys)
            if not isinstance(item["tournament"], str) or not 1 <= len(item["tournament"]) <= 64:
                raise TermsInvalid("prizes", "a ticket row names its tournament's slug")
        else:
            item = _keys("prizes", item, {"ranks", money, "kind"}, {"ranks", money})
            if item.get("kind", MONEY) != MONEY:
                raise TermsInvalid("prizes", 'a prize row\'s kind is "money" or "ticket"')
        match = _RANKS.fullmatch(item["ranks"]) if isinstance(item["ranks"], str) else None
        if match is None:
            raise TermsInvalid("prizes", f'ranks are "3" or "4-6", not {item["ranks"]!r}')
        first = int(match.group(1))
        last = int(match.group(2) or first)
        if ticket:
            rows.append(PrizeRow(first, last, None, TICKET, item["tournament"]))
        elif money == "percent":
            rows.append(PrizeRow(first, last, decimal_of("prizes", item["percent"])))
        else:
            value = decimal_of("prizes", item[money])
            _amount("prizes", value, allow_zero=False)
            rows.append(PrizeRow(first, last, None, amount=value))
    return tuple(rows)


def prizes_json(rows: Sequence[PrizeRow]) -> list[dict[str, str]]:
    def ranks(row: PrizeRow) -> str:
        return (
            str(row.rank_from) if row.rank_from == row.rank_to else f"{row.rank_from}-{row.rank_to}"
        )

    return [
        {"ranks": ranks(row), "kind": TICKET, "tournament": row.target}
        if row.kind == TICKET
        else {"ranks": ranks(row), "amount": amount_text(row.amount)}
        if row.amount is not None
        else {"ranks": ranks(row), "percent": amount_text(row.percent)}
        for row in rows
    ]


# --- a round's standings -------------------------------------------------------------------------


@dataclass(frozen=True)
class Standing:
    player: str
    position: int
    chips: int


def qualified_of(rule: RoundRule, tables: Sequence[Sequence[Standing]]) -> set[str]:
    """Who goes on to the next round (nobody from the final)."""
    if rule.qualify_top is not None:
        return {s.player for table in tables for s in table if s.position <= rule.qualify_top}
    if rule.qualify_min_chips is not None:
        return {s.player for table in tables for s in table if s.chips >= rule.qualify_min_chips}
    return set()
