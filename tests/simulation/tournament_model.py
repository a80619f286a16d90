"""The model's tournaments, from docs/tournaments.md alone: registrations paid by bucket (or with
a finance ticket), unregistrations, the start (cancelled below `min_players`), rebuys until their
round, a cancel refunding everything, and the prizes at the finish ("The money": the fee half to
even, the pool at least the guarantee, each rank its percent rounded down and the paise left by
largest remainder, players tied on chips sharing their ranks' prizes). Shares no code with the
service."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from tests.simulation.model import ZERO, Books, by_largest_remainder, fee_of


@dataclass
class Tournament:
    entry_fee: Decimal
    fee_percent: Decimal
    guarantee: Decimal
    min_players: int
    bonus_cap: Decimal
    rebuy_price: Decimal
    rebuys_max: int
    prizes: list[Decimal]  # rank 1, 2, ...: each rank's percent of the pool
    status: str = "registering"  # running, finished, cancelled
    round: int = 0
    paid: dict[str, list[dict[str, Decimal]]] = field(default_factory=dict)  # entry, rebuys
    tickets: dict[str, str] = field(default_factory=dict)  # player -> active, used, refunded
    qualified: list[str] = field(default_factory=list)  # round 1's first two: the final's
    knocked_out: dict[str, int] = field(default_factory=dict)  # the others: their chips

    def collected(self) -> Decimal:
        return sum((sum(e.values()) for entries in self.paid.values() for e in entries), ZERO)


def prizes_by_rank(pool: Decimal, percents: list[Decimal]) -> list[Decimal]:
    """Each paid rank its percent of the pool rounded down; the paise left by largest
    remainder, the better rank first."""
    return list(by_largest_remainder(pool, dict(enumerate(percents))).values())


def ranks(final: list[str], knocked_out: dict[str, int]) -> list[list[str]]:
    """The players rank by rank, a list per rank group: the final's positions first, then those
    knocked out by their chips, most first, equal chips one group (in external-id order)."""
    groups = [[p] for p in final]
    for chips in sorted(set(knocked_out.values()), reverse=True):
        groups.append(sorted(p for p, c in knocked_out.items() if c == chips))
    return groups


def shared_prizes(groups: list[list[str]], by_rank: list[Decimal]) -> dict[str, Decimal]:
    """A group of tied players shares the prizes of the ranks it spans equally, leftover paise
    by largest remainder in the order of their external ids."""
    prizes, rank = {}, 0
    for group in groups:
        spanned = sum(by_rank[rank : rank + len(group)], ZERO)
        prizes |= by_largest_remainder(spanned, dict.fromkeys(group, Decimal(1)))
        rank += len(group)
    return prizes


class TournamentBooks:
    """The tournaments of one run over the model's players and platform accounts."""

    def __init__(self, books: Books):
        self.books = books
        self.tournaments: dict[str, Tournament] = {}

    def ticket_issue(self, slug: str, player: str) -> None:
        """Finance's ticket: the entry fee's value from promotions into the tickets account."""
        t = self.tournaments[slug]
        t.tickets[player] = "active"
        self.books.platform["promotions"] -= t.entry_fee

    def register(self, slug: str, player: str, pay_with_money: bool) -> dict | str:
        """What the entry took, by bucket (or `ticket`), or the refusal's code."""
        t, p = self.tournaments[slug], self.books.players[player]
        if t.status != "registering":
            return "registration_closed"
        if p.excluded:
            return "self_excluded"
        if player in t.paid:
            return "already_registered"
        if t.tickets.get(player) == "active" and not pay_with_money:
            t.tickets[player] = "used"
            paid = {"ticket": t.entry_fee}
        else:
            paid = p.take(t.entry_fee, t.bonus_cap)
            if paid is None:
                return "insufficient_funds"
        t.paid[player] = [paid]
        return paid

    def unregister(self, slug: str, player: str) -> str | None:
        t = self.tournaments[slug]
        if t.status != "registering":
            return "registration_closed"
        if player not in t.paid:
            return "not_registered"
        (paid,) = t.paid.pop(player)
        if "ticket" in paid:
            t.tickets[player] = "active"
        else:
            self.books.players[player].give_back(paid)
        return None

    def start(self, slug: str) -> None:
        """Running, or cancelled below `min_players`; a finance ticket nobody used goes back to
        promotions (`refunded`: docs/tournaments.md "Tickets from finance")."""
        t = self.tournaments[slug]
        if len(t.paid) < t.min_players:
            self.cancel(slug)
            return
        t.status, t.round = "running", 1
        for player, state in t.tickets.items():
            if state == "active":
                t.tickets[player] = "refunded"
                self.books.platform["promotions"] += t.entry_fee

    def rebuy(self, slug: str, player: str) -> dict | str:
        t = self.tournaments[slug]
        if player not in t.paid:
            return "not_registered"
        if self.books.players[player].excluded:
            return "self_excluded"
        if len(t.paid[player]) > t.rebuys_max:
            return "rebuy_limit"
        paid = self.books.players[player].take(t.rebuy_price, t.bonus_cap)
        if paid is None:
            return "insufficient_funds"
        t.paid[player].append(paid)
        return paid

    def cancel(self, slug: str) -> None:
        """Every entry and rebuy back where it came from; every finance ticket, used or not, back
        to promotions."""
        t = self.tournaments[slug]
        for player, entries in t.paid.items():
            for paid in entries:
                if "ticket" not in paid:
                    self.books.players[player].give_back(paid)
        for player, state in t.tickets.items():
            if state in ("active", "used"):
                t.tickets[player] = "refunded"
                self.books.platform["promotions"] += t.entry_fee
        t.status = "cancelled"

    def finish(self, slug: str, final: list[str], knocked_out: dict[str, int]) -> dict:
        """The prizes to winnings, the fee to fee revenue, the overlay from promotions."""
        t = self.tournaments[slug]
        collected = t.collected()
        fee = fee_of(collected, t.fee_percent)
        pool = max(t.guarantee, collected - fee)
        prizes = shared_prizes(ranks(final, knocked_out), prizes_by_rank(pool, t.prizes))
        for player, prize in prizes.items():
            self.books.players[player].winnings += prize
        self.books.platform["fee_revenue"] += fee
        self.books.platform["promotions"] -= pool - (collected - fee)
        t.status = "finished"
        return {"collected": collected, "fee": fee, "prize_pool": pool, "prizes": prizes}
