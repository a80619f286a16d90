"""What a game pays: pure money math, no Django, no I/O. Rounds what games pay (the fee, shared
prizes, the bonus cap of an entry); taxes are rounded by `wallets/tax/formulas.py` (`to_paisa`,
half up), and the ledger rounds nothing (`wallets/money/parsing.py`).

Rounding rule for games (every settlement follows it):

1. Amounts are `Decimal` to the paisa (0.01; practice chips too). Stakes and entry fees are whole
   paise, so what a game collects is exact.
2. The platform fee is `fee_percent` % of what the winner(s) receive, rounded to the paisa half to
   even (`fee_of`). The winner(s) get the rest, so prize == fee + payouts exactly.
3. A prize shared by several players (pool split) is cut into whole paise by **largest
   remainder** (`largest_remainder`): everyone gets the floor of their exact share; the paise left
   over go one each to the largest fractional remainders, ties to the earlier seat. Shares always
   add up to the amount, so nothing is created or destroyed and there is no residue.
4. A refund goes back to the buckets the entry came from (`refund_by_bucket`): what a seat
   lost is charged to each bucket in proportion to what it put in, the bonus part rounded down
   (others by largest remainder), so a loss never takes more bonus than the entry's bonus cap
   allows on it: losing on purpose cannot turn bonus into a partner's winnings.

Invariant, checked by the property tests: payouts + fee + refunds == collected, for every game.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_FLOOR, ROUND_HALF_EVEN, Decimal
from itertools import groupby
from operator import itemgetter

from wallets.money.amounts import PAISA, ZERO

HUNDRED = Decimal(100)


def paise(amount: Decimal) -> Decimal:
    return amount.quantize(PAISA)


def fee_of(prize: Decimal, fee_percent: Decimal) -> Decimal:
    """The platform's fee on a prize: `fee_percent` % rounded to the paisa, half to even."""
    if prize < 0 or not (0 <= fee_percent <= 100):
        raise ValueError("prize must be >= 0 and the fee percent within 0..100")
    return (prize * fee_percent / HUNDRED).quantize(PAISA, rounding=ROUND_HALF_EVEN)


def largest_remainder(amount: Decimal, weights: Sequence[Decimal | int]) -> list[Decimal]:
    """Split `amount` in whole paise in proportion to `weights` (largest remainder method).

    Ties among remainders go to the earlier position. With all weights zero the amount is split
    equally. `largest_remainder(Decimal("10"), [1, 2])` == [3.33, 6.67].
    """
    if not weights:
        raise ValueError("no one to share with")
    if any(w < 0 for w in weights):
        raise ValueError("weights cannot be negative")
    if amount < 0 or paise(amount) != amount:
        raise ValueError("amount must be whole paise and not negative")
    total_weight = sum(Decimal(w) for w in weights)
    if total_weight == 0:
        weights = [1] * len(weights)
        total_weight = Decimal(len(weights))
    units = int(amount / PAISA)
    exact = [Decimal(units) * Decimal(w) / total_weight for w in weights]
    floors = [int(e.to_integral_value(rounding=ROUND_FLOOR)) for e in exact]
    left = units - sum(floors)
    order = sorted(range(len(weights)), key=lambda i: (-(exact[i] - floors[i]), i))
    for i in order[:left]:
        floors[i] += 1
    return [Decimal(f) * PAISA for f in floors]


def refund_by_bucket(
    contributed: Sequence[tuple[str, Decimal]], refund: Decimal, *, rounded_down: str
) -> list[tuple[str, Decimal]]:
    """Which buckets a refund goes to (rule 4): what the seat lost (paid in - refund) is charged
    to the buckets in proportion to what each put in, the `rounded_down` bucket's part (bonus)
    rounded down to the paisa and the rest split over the other buckets by largest remainder;
    each bucket gets back what it put in less its part. A loss so takes bonus at most in the
    share the entry took it, and the bonus cap of the entry holds on what is lost too.

    `contributed` lists (bucket, amount), each bucket once, in the order they were charged.
    """
    total = sum((a for _, a in contributed), ZERO)
    if refund < 0 or refund > total:
        raise ValueError("a refund is between nothing and everything paid in")
    if len({b for b, _ in contributed}) != len(contributed):
        raise ValueError("each bucket is listed once")
    lost = total - refund
    capped = sum((a for b, a in contributed if b == rounded_down), ZERO)
    capped_lost = (lost * capped / total).quantize(PAISA, rounding=ROUND_FLOOR) if total else ZERO
    others = [a for b, a in contributed if b != rounded_down]
    others_lost = iter(largest_remainder(lost - capped_lost, others) if others else [])
    out: list[tuple[str, Decimal]] = []
    for bucket, amount in contributed:
        back = amount - (capped_lost if bucket == rounded_down else next(others_lost))
        if back > 0:
            out.append((bucket, back))
    return out


def bonus_cap(stake: Decimal, cap_percent: Decimal) -> Decimal:
    """The most of a stake that may come from bonus: `cap_percent` % of it, rounded down to the
    paisa (a cap is never exceeded by rounding)."""
    if stake < 0 or not (0 <= cap_percent <= 100):
        raise ValueError("stake must be >= 0 and the cap percent within 0..100")
    return (stake * cap_percent / HUNDRED).quantize(PAISA, rounding=ROUND_FLOOR)


def charge_by_bucket(
    balances: Mapping[str, Decimal],
    order: Sequence[str],
    amount: Decimal,
    caps: Mapping[str, Decimal] | None = None,
) -> list[tuple[str, Decimal]] | None:
    """Take `amount` from the buckets in `order`, at most `caps[bucket]` from a capped bucket;
    None when they do not hold enough."""
    caps = caps or {}
    out: list[tuple[str, Decimal]] = []
    left = amount
    for bucket in order:
        if left <= 0:
            break
        take = min(balances.get(bucket, ZERO), caps.get(bucket, left), left)
        if take > 0:
            out.append((bucket, take))
            left -= take
    return out if left <= 0 else None


@dataclass(frozen=True)
class Settlement:
    """Money out of one game's escrow: prizes to winnings, refunds to buckets, the fee."""

    payouts: dict[str, Decimal] = field(default_factory=dict)
    refunds: dict[str, Decimal] = field(default_factory=dict)
    fee: Decimal = ZERO

    @property
    def total(self) -> Decimal:
        return sum(self.payouts.values(), ZERO) + sum(self.refunds.values(), ZERO) + self.fee


def points_settlement(
    *,
    stakes: Mapping[str, Decimal],
    points: Mapping[str, int],
    winner: str,
    point_value: Decimal,
    fee_percent: Decimal,
) -> Settlement:
    """Points rummy: each loser pays points x point value (at most their stake in escrow); the
    winner receives the sum minus the fee; everything else in escrow goes back."""
    refunds: dict[str, Decimal] = {}
    won = ZERO
    for player, stake in stakes.items():
        if player == winner:
            refunds[player] = stake
            continue
        loss = min(paise(Decimal(points[player]) * point_value), stake)
        won += loss
        refunds[player] = stake - loss
    fee = fee_of(won, fee_percent)
    return Settlement(payouts={winner: won - fee}, refunds=refunds, fee=fee)


def prize_settlement(*, prize: Decimal, winner: str, fee_percent: Decimal) -> Settlement:
    """Pool, deals, Rummy 500: the whole prize pool minus the fee to the one winner."""
    fee = fee_of(prize, fee_percent)
    return Settlement(payouts={winner: prize - fee}, fee=fee)


def drops_left(score: int, limit: int, first_drop_points: int) -> int:
    """Pool split: drops a player can still afford, floor((limit - 1 - score) / first drop)."""
    return max(0, (limit - 1 - score) // first_drop_points)


def split_settlement(
    *, prize: Decimal, weights: Mapping[str, int], fee_percent: Decimal
) -> Settlement:
    """Pool split by agreement: the fee comes off the prize, the rest is shared by weight
    (equal: all 1; by drops: drops left + 1) by largest remainder."""
    fee = fee_of(prize, fee_percent)
    players = list(weights)
    shares = largest_remainder(prize - fee, [weights[p] for p in players])
    return Settlement(payouts=dict(zip(players, shares, strict=True)), fee=fee)


def split_by_drop_value(
    *, prize: Decimal, drops: Mapping[str, int], entry_fee: Decimal, fee_percent: Decimal
) -> Settlement:
    """Pool split by drop value (docs/rules.md "Split"): the fee comes off the prize; each player is
    paid the entry fee for every drop held above the fewest anyone holds, and the rest is shared
    equally. When those payments alone exceed what is left after the fee, the split falls back
    to shares in proportion to (drops left + 1). Both by largest remainder (rule 3).

    ``drops`` maps each remaining player to ``drops_left(...)``.
    """
    if not drops:
        raise ValueError("no one to share with")
    if any(d < 0 for d in drops.values()) or entry_fee < 0 or paise(entry_fee) != entry_fee:
        raise ValueError("drops cannot be negative and the entry fee is whole paise")
    fee = fee_of(prize, fee_percent)
    pot = prize - fee
    players = list(drops)
    fewest = min(drops.values())
    extra = [entry_fee * (drops[p] - fewest) for p in players]
    if sum(extra, ZERO) > pot:
        shares = largest_remainder(pot, [drops[p] + 1 for p in players])
    else:
        equal = largest_remainder(pot - sum(extra, ZERO), [1] * len(players))
        shares = [x + e for x, e in zip(extra, equal, strict=True)]
    return Settlement(payouts=dict(zip(players, shares, strict=True)), fee=fee)


def cancel_settlement(*, contributed: Mapping[str, Decimal]) -> Settlement:
    """A cancelled game: everyone gets back everything they paid in; no fee."""
    return Settlement(refunds=dict(contributed))


# --- tournaments ---------------------------------------------------------------------------------
#
# Rule 2 for tournaments: the fee is `fee_percent` % of what was collected (entries + rebuys),
# half to even; the pool is max(guarantee, collected - fee), and the platform pays the
# difference (the overlay). Rule 3: each paid rank's prize is its percent of the pool by largest
# remainder, the better rank first among equal remainders; players tied on chips share the
# ranks they span, the sum of those ranks' prizes split equally by largest remainder in the
# order of their external ids. Invariant: prizes + fee == collected + overlay.


@dataclass(frozen=True)
class PoolFigures:
    collected: Decimal
    fee: Decimal
    prize_pool: Decimal
    overlay: Decimal


def tournament_pool(*, collected: Decimal, fee_percent: Decimal, guarantee: Decimal) -> PoolFigures:
    fee = fee_of(collected, fee_percent)
    prize_pool = max(guarantee, collected - fee)
    return PoolFigures(collected, fee, prize_pool, prize_pool - (collected - fee))


MONEY = "money"
TICKET = "ticket"


@dataclass(frozen=True)
class PrizeRow:
    """One row of a prize table: each of ranks `rank_from`..`rank_to` gets `percent` % of what
    the pool holds after the seats (kind "money"), or a seat: a ticket to the tournament
    `target` (kind "ticket", no percent), worth its entry fee. A leaderboard's money rows pay a
    fixed `amount` per rank instead (no percent)."""

    rank_from: int
    rank_to: int
    percent: Decimal | None
    kind: str = MONEY
    target: str | None = None
    amount: Decimal | None = None


def seats_of(rows: Sequence[PrizeRow]) -> int:
    """How many ranks the table pays a ticket (a satellite's seats)."""
    return sum(row.rank_to - row.rank_from + 1 for row in rows if row.kind == TICKET)


def rank_prizes(
    pool: Decimal, rows: Sequence[PrizeRow], seat_value: Decimal = ZERO
) -> list[Decimal]:
    """The prize of each paid rank (index 0: rank 1); they add up to the pool exactly. The seats
    (ticket rows, the first ranks) take `seat_value` each first; the money rows share the rest
    by their percentages, or, with none, the rank after the seats takes it (the bubble)."""
    seats = seats_of(rows)
    rest = pool - seats * seat_value
    if rest < 0:
        raise ValueError("the pool does not cover the seats")
    weights = [
        row.percent
        for row in rows
        if row.kind == MONEY
        for _ in range(row.rank_from, row.rank_to + 1)
    ]
    return [seat_value] * seats + (largest_remainder(rest, weights) if weights else [rest])


def prize_runs(prizes: Sequence[Decimal]) -> list[tuple[int, int, Decimal]]:
    """(rank_from, rank_to, amount) for each run of equal amounts."""
    runs: list[tuple[int, int, Decimal]] = []
    for rank, amount in enumerate(prizes, start=1):
        if runs and runs[-1][2] == amount:
            runs[-1] = (runs[-1][0], rank, amount)
        else:
            runs.append((rank, rank, amount))
    return runs


@dataclass(frozen=True)
class RankGroup:
    """Players sharing rank `rank` and the ranks after it up to `rank + len(players) - 1`."""

    rank: int
    players: tuple[str, ...]

    @property
    def rank_to(self) -> int:
        return self.rank + len(self.players) - 1


def tournament_ranks(
    *, final: Mapping[str, int], knocked_out: Mapping[int, Mapping[str, int]]
) -> list[RankGroup]:
    """Ranks from the rounds: the final table's positions are ranks 1..n; the players knocked
    out in round r come after everyone who went further, by their chips in round r (most
    first), equal chips sharing the ranks they span.

    `final`: player -> position at the final table; `knocked_out`: round -> player -> chips.
    """
    groups = [RankGroup(n, (player,)) for n, player in enumerate(sorted(final, key=final.get), 1)]
    rank = len(groups) + 1
    for round_no in sorted(knocked_out, reverse=True):
        # one sort, most chips first and the tied by external id: O(n log n) for the round
        ordered = sorted(knocked_out[round_no].items(), key=lambda pc: (-pc[1], pc[0]))
        for _, run in groupby(ordered, key=itemgetter(1)):
            tied = tuple(player for player, _ in run)
            groups.append(RankGroup(rank, tied))
            rank += len(tied)
    return groups


def prizes_by_player(groups: Sequence[RankGroup], prizes: Sequence[Decimal]) -> dict[str, Decimal]:
    """Each player's prize: a group's share of the prizes of the ranks it spans (ranks past the
    prize table pay nothing)."""
    out: dict[str, Decimal] = {}
    for group in groups:
        spanned = sum(prizes[group.rank - 1 : group.rank_to], ZERO)
        if len(group.players) == 1 or not spanned:  # nothing to share (most players)
            out.update(dict.fromkeys(group.players, spanned))
            continue
        shares = largest_remainder(spanned, [1] * len(group.players))
        out.update(zip(group.players, shares, strict=True))
    return out


def ticket_winners(groups: Sequence[RankGroup], seats: int) -> set[str]:
    """Who wins a seat: the players of a group lying wholly within the first `seats` ranks (a
    group across the last seat shares the seats' value in money, `prizes_by_player`)."""
    return {p for group in groups if group.rank_to <= seats for p in group.players}


def paid_from(
    sources: Sequence[tuple[int, Decimal]], amounts: Sequence[Decimal]
) -> list[list[tuple[int, Decimal]]]:
    """Which sources pay each amount: the sources (key, amount) are drawn in order, each amount
    from the one being drawn and the next ones when it runs out, so every amount is paid from
    one or a few sources (a payout as one small transfer per payee) in O(sources + amounts).
    The sources must add up to the amounts exactly."""
    if sum((a for _, a in sources), ZERO) != sum(amounts, ZERO):
        raise ValueError("the sources do not add up to what they pay")
    if any(a < 0 for _, a in sources) or any(a < 0 for a in amounts):
        raise ValueError("amounts cannot be negative")
    out: list[list[tuple[int, Decimal]]] = []
    drawn = iter(sources)
    key, left = None, ZERO
    for amount in amounts:
        parts: list[tuple[int, Decimal]] = []
        while amount > 0:
            while left == 0:
                key, left = next(drawn)
            take = min(left, amount)
            parts.append((key, take))
            left -= take
            amount -= take
        out.append(parts)
    return out
