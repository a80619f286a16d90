"""The model the state machine checks the service against: plain Python written from the public
contract alone (docs/api.md, docs/rules.md, docs/money-and-tax.md), sharing no code with the
service. It knows every player's buckets, every game's escrow and standings, every withdrawal
and tax position, and what the platform's fee, GST and TDS accounts have received."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_DOWN, ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal

PAISA = Decimal("0.01")
ZERO = Decimal("0.00")
# docs/money-and-tax.md: GST 40 % since 22 September 2025 (docs/law-india.md), TDS 30 % of net
# winnings above 0 (s.194BA), a withdrawal above ₹10,000 or a player's first waits for finance.
GST_RATE = Decimal("40")
TDS_RATE = Decimal("30")
AUTO_APPROVE_MAX = Decimal("10000.00")
# the platform accounts it follows (promotions: bonus lots, finance tickets, tournament overlays)
PLATFORM = ("fee_revenue", "gst_payable", "tds_payable", "promotions")
BONUS_CAP = Decimal("10")  # docs/rules.md "Buckets and the bonus cap": the templates' default

# --- cards (docs/rules.md, "13-card rummy", S0 and its pool101/deals presets) -------------------

RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
SUITS = ["S", "H", "D", "C"]
WILD = "KD"  # every deal of the machine turns up the king of diamonds: every K is a joker
OTHER_WILD = "QD"  # a deal posted again with other content: another card turned up
CAP = 80


def rank(card: str) -> str:
    return card[:-1]


def is_joker(card: str) -> bool:
    return card == "PJ" or rank(card) == rank(WILD)


def card_points(card: str) -> int:
    if is_joker(card):
        return 0
    r = rank(card)
    return 10 if r in ("A", "J", "Q", "K") else int(r)


def _runs(cards: list[str], jokers: int) -> bool:
    """One suit, distinct places, the gaps filled by the jokers: a sequence (an ace is low, 1,
    or high, 14, never both)."""
    if len({c[-1] for c in cards}) != 1:
        return False
    for ace in (1, 14):
        places = sorted(ace if rank(c) == "A" else RANKS.index(rank(c)) + 1 for c in cards)
        distinct = len(set(places)) == len(places)
        if distinct and places[-1] - places[0] + 1 - len(places) <= jokers:
            return True
    return False


def is_pure_sequence(group: list[str]) -> bool:
    """Every card stands for itself (a wild card in its own place too)."""
    return len(group) >= 3 and "PJ" not in group and _runs(group, 0)


def group_kind(group: list[str]) -> str | None:
    if len(group) < 3:
        return None
    if is_pure_sequence(group):
        return "pure"
    plain = [c for c in group if not is_joker(c)]
    jokers = len(group) - len(plain)
    if not plain:
        return "jokers"
    if _runs(plain, jokers):
        return "impure"
    ranks, suits = {rank(c) for c in plain}, [c[-1] for c in plain]
    if len(ranks) == 1 and len(set(suits)) == len(suits) and len(group) <= 4:
        return "set"
    return None


def valid_declaration(groups: list[list[str]]) -> bool:
    kinds = [group_kind(g) for g in groups]
    sequences = sum(k in ("pure", "impure") for k in kinds)
    return None not in kinds and sequences >= 2 and "pure" in kinds


def hand_points(groups: list[list[str]]) -> int:
    """A loser's points under `pure_only`: with a pure sequence every valid group is kept."""
    if valid_declaration(groups):
        return 2  # valid_second
    if any(group_kind(g) == "pure" for g in groups):
        counted = [c for g in groups if group_kind(g) is None for c in g]
    else:
        counted = [c for g in groups for c in g]
    return min(sum(card_points(c) for c in counted), CAP)


LIMITS = ("daily", "monthly")  # a run stays within one IST day and month

DROPS = {"first_drop": 20, "middle_drop": 40, "wrong_show": 80}


def deal_refusal(results: list[dict]) -> str | None:
    """The rules' code for a deal the engine refuses, None for one it takes."""
    declared = next(r for r in results if r["outcome"] == "declared")
    if not valid_declaration(declared["groups"]):
        return "invalid_declaration"
    shown = [r["groups"] for r in results if r["outcome"] == "wrong_show" and "groups" in r]
    if any(valid_declaration(groups) for groups in shown):
        return "wrong_show_valid"
    return None


def result_points(result: dict) -> int:
    if result["outcome"] == "declared":
        return 0
    if result["outcome"] in DROPS:
        return DROPS[result["outcome"]]
    return hand_points(result["groups"])


# --- money (docs/rules.md "the rounding rule", docs/money-and-tax.md) ---------------------------


def fee_of(amount: Decimal, percent: Decimal) -> Decimal:
    return (amount * percent / 100).quantize(PAISA, ROUND_HALF_EVEN)


def gst_of(amount: Decimal) -> Decimal:
    return (amount * GST_RATE / (100 + GST_RATE)).quantize(PAISA, ROUND_HALF_UP)


def by_largest_remainder(amount: Decimal, weights: dict[str, Decimal]) -> dict[str, Decimal]:
    """`amount` in whole paise in proportion to `weights` (docs/rules.md: "all by largest
    remainder"; ties to the earlier key)."""
    total = sum(weights.values())
    exact = {k: amount * w / total for k, w in weights.items()}
    floor = {k: e.quantize(PAISA, ROUND_DOWN) for k, e in exact.items()}
    left = int((amount - sum(floor.values())) / PAISA)
    for k in sorted(weights, key=lambda k: -(exact[k] - floor[k]))[:left]:
        floor[k] += PAISA
    return floor


def lost_by_bucket(paid: dict[str, Decimal], lost: Decimal) -> dict[str, Decimal]:
    """What a seat lost, charged to each bucket in proportion to what it put in: the bonus part
    rounded down, the rest by largest remainder over the other buckets (ties to the earlier
    bucket of the entry order)."""
    total = sum(paid.values())
    if total == 0:
        return {b: ZERO for b in paid}
    bonus = (lost * paid.get("bonus", ZERO) / total).quantize(PAISA, ROUND_DOWN)
    rest = {b: v for b, v in paid.items() if b != "bonus"}
    if sum(rest.values()) == 0:
        return {b: ZERO for b in rest} | {"bonus": bonus}
    return {"bonus": bonus} | by_largest_remainder(lost - bonus, rest)


# docs/rules.md "Pool rummy" and "Split": pool101's limit and rejoin bound, drops left counted in
# first drops.
POOL_LIMIT = 101
REJOIN_BELOW = 79


def drops_left(score: int) -> int:
    return max((POOL_LIMIT - 1 - score) // DROPS["first_drop"], 0)


@dataclass
class Player:
    deposit: Decimal = ZERO
    winnings: Decimal = ZERO
    pending: Decimal = ZERO
    bonus: Decimal = ZERO
    pan: str | None = None
    deposits_credited: Decimal = ZERO
    withdrawn: Decimal = ZERO  # this year's withdrawals neither rejected nor failed
    taxed: Decimal = ZERO
    deposited: Decimal = ZERO  # paid in today, GST included (what the deposit limits count)
    limits: dict[str, Decimal | None] = field(default_factory=lambda: dict.fromkeys(LIMITS))
    excluded: bool = False

    def balances(self) -> dict[str, Decimal]:
        return {
            "bonus": self.bonus,
            "deposit": self.deposit,
            "winnings": self.winnings,
            "pending": self.pending,
        }

    def spendable(self, amount: Decimal, cap: Decimal = BONUS_CAP) -> Decimal:
        return min(self.bonus, (amount * cap / 100).quantize(PAISA, ROUND_DOWN))

    def take(self, amount: Decimal, cap: Decimal = BONUS_CAP) -> dict[str, Decimal] | None:
        """An entry in the default order: bonus (at most `cap` % of it, rounded down), deposit,
        winnings; None when they do not cover it (nothing taken)."""
        from_bonus = self.spendable(amount, cap)
        if from_bonus + self.deposit + self.winnings < amount:
            return None
        from_deposit = min(self.deposit, amount - from_bonus)
        taken = {
            "bonus": from_bonus,
            "deposit": from_deposit,
            "winnings": amount - from_bonus - from_deposit,
        }
        self.give_back({b: -v for b, v in taken.items()})
        return taken

    def give_back(self, by_bucket: dict[str, Decimal]) -> None:
        self.bonus += by_bucket.get("bonus", ZERO)
        self.deposit += by_bucket.get("deposit", ZERO)
        self.winnings += by_bucket.get("winnings", ZERO)

    def limit_set(self, kind: str, amount: Decimal | None) -> None:
        """docs/money-and-tax.md: a lower limit counts at once; a higher one, or none, waits
        (`DEPOSIT_LIMIT_RAISE_DELAY_HOURS`, longer than any run), so the machine never sees it."""
        now = self.limits[kind]
        if amount is not None and (now is None or amount < now):
            self.limits[kind] = amount

    def deposit_refusal(self, amount: Decimal) -> str | None:
        if self.excluded:
            return "self_excluded"
        over = [k for k, v in self.limits.items() if v is not None and self.deposited + amount > v]
        return "deposit_limit" if over else None


@dataclass
class Game:
    fmt: str  # points, pool101, deals
    players: list[str]
    paid: dict[str, list[dict[str, Decimal]]]  # each seat's entries by bucket (a rejoin adds one)
    fee_percent: Decimal
    point_value: Decimal = ZERO
    deals_n: int = 0
    status: str = "open"
    deals: int = 0
    scores: dict[str, int] = field(default_factory=dict)
    out: set[str] = field(default_factory=set)

    def collected(self) -> Decimal:
        return sum((sum(e.values()) for seats in self.paid.values() for e in seats), ZERO)

    def in_play(self) -> list[str]:
        return [p for p in self.players if p not in self.out]


@dataclass
class Withdrawal:
    player: str
    amount: Decimal
    tds: Decimal
    taxed: Decimal  # the net winnings taxed at it
    status: str
    from_deposit: Decimal = ZERO  # with real money off, a refund of deposit after the winnings


class Books:
    """The whole model: players, games, withdrawals, the platform accounts' receipts."""

    def __init__(self):
        self.players: dict[str, Player] = {}
        self.games: dict[str, Game] = {}
        self.withdrawals: dict[int, Withdrawal] = {}
        self.platform = dict.fromkeys(PLATFORM, ZERO)
        self.real_money = True  # REAL_MONEY on, or off (docs/law-india.md)

    # money in and out

    def deposit(self, player: str, amount: Decimal) -> tuple[Decimal, Decimal] | str:
        """GST and the credit, or the refusal's code (nothing moves)."""
        p = self.players.setdefault(player, Player())
        refusal = p.deposit_refusal(amount) if self.real_money else "real_money_unavailable"
        if refusal:
            return refusal
        gst = gst_of(amount)
        p.deposited += amount
        p.deposit += amount - gst
        p.deposits_credited += amount - gst
        self.platform["gst_payable"] += gst
        return gst, amount - gst

    def withdraw(self, player: str, amount: Decimal) -> Withdrawal | str:
        p = self.players[player]
        if p.pan is None:
            return "kyc_required"
        # real money off: the winnings first, then the deposit (a refund: docs/law-india.md)
        from_deposit = ZERO if self.real_money else max(amount - p.winnings, ZERO)
        if p.winnings + min(from_deposit, p.deposit) < amount:
            return "insufficient_funds"
        net = p.withdrawn + amount - p.deposits_credited - p.taxed
        tds = min((max(net, ZERO) * TDS_RATE / 100).quantize(PAISA, ROUND_HALF_UP), amount)
        p.give_back({"winnings": from_deposit - amount, "deposit": -from_deposit})
        p.pending += amount
        p.withdrawn += amount
        p.taxed += max(net, ZERO)
        first = not any(
            w.player == player and w.status in ("approved", "paid")
            for w in self.withdrawals.values()
        )  # docs/money-and-tax.md: none approved before
        waits = first or amount > AUTO_APPROVE_MAX
        w = Withdrawal(player, amount, tds, max(net, ZERO), "requested", from_deposit)
        if not waits:
            self.approve(w)
        return w

    def bonus_grant(self, player: str, amount: Decimal) -> None:
        """A lot from promotions (docs/money-and-tax.md "Bonus"); lots expire after
        `BONUS_EXPIRY_DAYS`, longer than any run, so the model keeps the bucket's total only."""
        self.players[player].bonus += amount
        self.platform["promotions"] -= amount

    def approve(self, w: Withdrawal) -> None:
        p = self.players[w.player]
        p.pending -= w.amount
        self.platform["tds_payable"] += w.tds
        w.status = "approved"

    def failed(self, w: Withdrawal) -> None:
        p = self.players[w.player]
        p.give_back({"winnings": w.amount - w.from_deposit, "deposit": w.from_deposit})
        p.withdrawn -= w.amount
        p.taxed -= w.taxed
        self.platform["tds_payable"] -= w.tds
        w.status = "failed"

    # games

    def stake(self, game: Game) -> Decimal:
        return CAP * game.point_value if game.fmt == "points" else game.point_value

    def open(self, game_id: str, game: Game) -> tuple[str, list[str]] | None:
        """Every player's entry into escrow, all or nothing; or the refusal:
        `real_money_unavailable` (real money off) naming every player, else `self_excluded`
        naming the excluded players, else `insufficient_funds` naming those who are short."""
        if not self.real_money:
            return "real_money_unavailable", game.players
        excluded = [p for p in game.players if self.players[p].excluded]
        if excluded:
            return "self_excluded", excluded
        short = [p for p in game.players if self.short(p, self.stake(game))]
        if short:
            return "insufficient_funds", short
        for p in game.players:
            game.paid[p] = [self.players[p].take(self.stake(game))]
            game.scores[p] = CAP * game.deals_n if game.fmt == "deals" else 0
        self.games[game_id] = game
        return None

    def short(self, player: str, amount: Decimal) -> bool:
        p = self.players[player]
        return p.spendable(amount) + p.deposit + p.winnings < amount

    def deal(self, game_id: str, results: list[dict]) -> None:
        """A deal the service accepted, settled."""
        game = self.games[game_id]
        game.deals += 1
        points = {r["player"]: result_points(r) for r in results}
        winner = next(r["player"] for r in results if r["outcome"] == "declared")
        if game.fmt == "points":
            self._points_settle(game, points, winner)
        elif game.fmt == "pool101":
            for p, n in points.items():
                game.scores[p] += n
                if game.scores[p] >= POOL_LIMIT:
                    game.out.add(p)
            if len(game.in_play()) == 1:
                self._pay_winner(game, game.in_play()[0])
        else:
            for p, n in points.items():
                given = min(n, game.scores[p])
                game.scores[p] -= given
                game.scores[winner] += given
            if game.deals >= game.deals_n:
                top = max(game.scores[p] for p in game.in_play())
                leaders = [p for p in game.in_play() if game.scores[p] == top]
                if len(leaders) == 1:
                    self._pay_winner(game, leaders[0])
                else:
                    game.out |= {p for p in game.in_play() if p not in leaders}

    def _points_settle(self, game: Game, points: dict[str, int], winner: str) -> None:
        stake = self.stake(game)
        losses = {p: min(n * game.point_value, stake) for p, n in points.items()}
        pot = sum(losses.values())
        fee = fee_of(pot, game.fee_percent)
        for p in game.players:
            (paid,) = game.paid[p]
            lost = lost_by_bucket(paid, losses[p])
            self.players[p].give_back({b: paid[b] - lost[b] for b in paid})
        self.players[winner].winnings += pot - fee
        self.platform["fee_revenue"] += fee
        game.status = "finished"

    def _pay_winner(self, game: Game, winner: str) -> None:
        collected = game.collected()
        fee = fee_of(collected, game.fee_percent)
        self.players[winner].winnings += collected - fee
        self.platform["fee_revenue"] += fee
        game.status = "finished"

    def rejoin(self, game_id: str, player: str) -> str | None:
        """An eliminated pool player buys back in (docs/rules.md "Rejoin"): the entry fee again
        into the pool, from the buckets in the entry order; the player starts at the highest
        remaining score + 1. The refusal's code, or None."""
        game = self.games[game_id]
        if player not in game.out:
            return "not_eliminated"
        if self.players[player].excluded:
            return "self_excluded"
        top = max(game.scores[p] for p in game.in_play())
        if top >= REJOIN_BELOW:
            return "rejoin_closed"
        taken = self.players[player].take(game.point_value)
        if taken is None:
            return "insufficient_funds"
        game.paid[player].append(taken)
        game.scores[player] = top + 1
        game.out.discard(player)
        return None

    def split(self, game_id: str) -> dict[str, Decimal]:
        """The remaining players share what was collected less the fee, by drops left + 1 (the
        `drops` policy), as winnings: each one's share."""
        game = self.games[game_id]
        collected = game.collected()
        fee = fee_of(collected, game.fee_percent)
        weights = {p: Decimal(drops_left(game.scores[p]) + 1) for p in game.in_play()}
        shares = by_largest_remainder(collected - fee, weights)
        for p, share in shares.items():
            self.players[p].winnings += share
        self.platform["fee_revenue"] += fee
        game.status = "finished"
        return shares

    def cancel(self, game_id: str) -> None:
        game = self.games[game_id]
        for p, entries in game.paid.items():
            for paid in entries:
                self.players[p].give_back(paid)
        game.status = "cancelled"
