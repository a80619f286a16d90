"""What a leaderboard counts and how it ranks and pays: pure (no Django, no I/O).

- `game_points`: one settled game's (or finished tournament's) points per player by the
  leaderboard's rule: `fee`, points per rupee of the platform fee the player was charged (its
  share, `fee_shares`: a game charges its fee on winnings, so its payees share it in proportion
  to what each won; `entry_fee_shares`: a tournament charges it on entries, so its entrants
  share it in proportion to what each paid in), or `results`, winnings / win_divisor + losses /
  loss_divisor (a player's net: what came back to them less what they paid in).
- `standings`: players by points, most first; equal points share a rank (1, 2, 2, 4).
- `prize_plan`: the eligible players' prizes, ties sharing the ranks they span as tournaments
  do (`tournaments.payouts.prizes_by_player`); a skipped player is simply not ranked, so the
  prize passes to the next eligible rank.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from itertools import groupby
from typing import Any

from tournaments.payouts import (
    TICKET,
    PrizeRow,
    RankGroup,
    largest_remainder,
    prizes_by_player,
    seats_of,
    ticket_winners,
)

ZERO = Decimal("0.00")
POINT = Decimal("0.01")  # points are kept to two places, rounded half to even
FEE, RESULTS = "fee", "results"
# a rule's parameters and their defaults (the example: winnings / 100 + losses / 200)
PARAMETERS: dict[str, dict[str, Decimal]] = {
    FEE: {"points_per_rupee": Decimal("1")},
    RESULTS: {"win_divisor": Decimal("100"), "loss_divisor": Decimal("200")},
}


@dataclass(frozen=True)
class SeatResult:
    """What one player put into a settled game and got out of it, and their prize's fee."""

    paid_in: Decimal
    got_back: Decimal  # prize and refunds
    prize: Decimal


def _points(value: Decimal) -> Decimal:
    return value.quantize(POINT, rounding=ROUND_HALF_EVEN)


def _shared(fee: Decimal, weights: Mapping[Any, Decimal]) -> dict[Any, Decimal]:
    keys = [key for key, weight in weights.items() if weight > 0]
    if not keys or fee <= 0:
        return {}
    return dict(zip(keys, largest_remainder(fee, [weights[key] for key in keys]), strict=True))


def fee_shares(fee: Decimal, seats: Mapping[Any, SeatResult]) -> dict[Any, Decimal]:
    """A game's fee shared by its payees in proportion to their prizes (largest remainder)."""
    return _shared(fee, {key: seat.prize for key, seat in seats.items()})


def entry_fee_shares(fee: Decimal, seats: Mapping[Any, SeatResult]) -> dict[Any, Decimal]:
    """A tournament's fee shared by its entrants in proportion to what each paid in."""
    return _shared(fee, {key: seat.paid_in for key, seat in seats.items()})


def game_points(
    scoring: str,
    parameters: Mapping[str, Decimal],
    fees: Mapping[Any, Decimal],
    seats: Mapping[Any, SeatResult],
) -> dict[Any, Decimal]:
    """Each player's points from one settled game or tournament, `fees` the fee each was
    charged (players with none left out)."""
    if scoring == FEE:
        per_rupee = parameters["points_per_rupee"]
        out = {key: _points(share * per_rupee) for key, share in fees.items()}
    elif scoring == RESULTS:
        out = {}
        for key, seat in seats.items():
            net = seat.got_back - seat.paid_in
            if net >= 0:
                out[key] = _points(net / parameters["win_divisor"])
            else:
                out[key] = _points(-net / parameters["loss_divisor"])
    else:
        raise ValueError(f"no scoring rule {scoring!r}")
    return {key: points for key, points in out.items() if points > 0}


@dataclass(frozen=True)
class Standing:
    rank: int
    player: str
    points: Decimal


def standings(points: Sequence[tuple[str, Decimal]]) -> list[Standing]:
    """Players by points, most first (the tied by player id); equal points share a rank."""
    ordered = sorted(points, key=lambda pp: (-pp[1], pp[0]))
    out: list[Standing] = []
    for position, (player, value) in enumerate(ordered, start=1):
        rank = out[-1].rank if out and out[-1].points == value else position
        out.append(Standing(rank, player, value))
    return out


def rank_groups(ranked: Sequence[Standing]) -> list[RankGroup]:
    """The tied players as tournaments group them: a group spans the ranks it shares."""
    groups: list[RankGroup] = []
    rank = 1
    for _, run in groupby(ranked, key=lambda s: s.points):
        tied = tuple(s.player for s in run)
        groups.append(RankGroup(rank, tied))
        rank += len(tied)
    return groups


def rank_amounts(rows: Sequence[PrizeRow], seat_value: Decimal) -> list[Decimal]:
    """The value of each paid rank (index 0: rank 1): a ticket rank is worth its seat."""
    return [
        seat_value if row.kind == TICKET else row.amount
        for row in rows
        for _ in range(row.rank_from, row.rank_to + 1)
    ]


@dataclass(frozen=True)
class PrizePlan:
    money: dict[str, Decimal]  # player -> money prize
    tickets: list[str]  # players who win a seat (a ticket to the target)


def prize_plan(
    eligible: Sequence[Standing], rows: Sequence[PrizeRow], seat_value: Decimal
) -> PrizePlan:
    """The prizes of the eligible players (ranked among themselves, most points first). Ties
    share the ranks they span in money; a tied group wholly within the seats wins a seat each,
    one across the last seat shares the seats' value in money (as satellites do)."""
    groups = rank_groups([s for s in eligible if s.points > 0])
    amounts = rank_amounts(rows, seat_value)
    by_player = prizes_by_player(groups, amounts)
    seated = ticket_winners(groups, seats_of(rows)) if seat_value > 0 else set()
    money = {p: a for p, a in by_player.items() if a > 0 and p not in seated}
    return PrizePlan(money, sorted(seated))
