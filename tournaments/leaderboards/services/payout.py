"""Paying a leaderboard at its end, once: the leaderboard's row locked, its standings read, the
players who may not win skipped (self-excluded now, or in a one-way-flow pair finance has not
cleared: `LeaderboardSkip`, listed for finance) so each prize passes to the next eligible rank,
ties sharing as in tournaments (`rules.prize_plan`), and every prize in ONE transfer from
promotions (chips: chips issuance): money to winnings (chips to chips), a seat as a ticket to
the target (its value into the target's tickets account, `tickets.py`). The transfer's key is
`leaderboard:<pk>:prizes`: all or nothing, and a second run finds the leaderboard `paid` (or,
were it somehow run again, the ledger returns the first transfer).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from decimal import Decimal
from itertools import groupby

from django.db import transaction
from django.utils import timezone
from djmoney.money import Money

from tournaments.leaderboards import rules
from tournaments.leaderboards.services.setup import leaderboard_rows
from tournaments.models import (
    Leaderboard,
    LeaderboardPoints,
    LeaderboardSkip,
    Ticket,
    Tournament,
)
from tournaments.payouts import TICKET, PrizeRow
from tournaments.references import leaderboard_key, leaderboard_reference
from tournaments.tournaments.services.tickets import promotions_account_id, seat_payees_of
from wallets.models import CHIPS, Account, Bucket, Player, Transfer
from wallets.money.amounts import ZERO
from wallets.services.flows import players_under_review
from wallets.services.protection import self_excluded_of
from wallets.services.transfers import Leg, TransferRequest, transfers_post

Reason = LeaderboardSkip.Reason


def leaderboards_due_pay(*, now: datetime | None = None) -> int:
    """The periodic job's body: leaderboards whose period began are `running`; each whose
    period ended is paid in its own transaction. Safe to run any number of times. Returns how
    many it paid."""
    now = now or timezone.now()
    Leaderboard.objects.filter(status=Leaderboard.Status.SCHEDULED, starts_at__lte=now).update(
        status=Leaderboard.Status.RUNNING
    )
    due = Leaderboard.objects.filter(ends_at__lte=now).exclude(status=Leaderboard.Status.PAID)
    paid = 0
    for pk in due.order_by("ends_at", "pk").values_list("pk", flat=True):
        paid += leaderboard_pay(leaderboard_id=pk, now=now)
    return paid


def standings_of(leaderboard: Leaderboard) -> list[rules.Standing]:
    rows = LeaderboardPoints.objects.filter(leaderboard=leaderboard, points__gt=0)
    return rules.standings(list(rows.values_list("player__external_id", "points")))


def _ineligible(player_ids: list[int], now: datetime) -> dict[int, str]:
    out = dict.fromkeys(players_under_review(player_ids=player_ids), Reason.FLAGGED_PAIR)
    out.update(
        dict.fromkeys(self_excluded_of(player_ids=player_ids, now=now), Reason.SELF_EXCLUDED)
    )
    return out


def _skipped(
    ranked: list[rules.Standing], ineligible: set[str], rows: tuple[PrizeRow, ...]
) -> list[rules.Standing]:
    """The ineligible players who would have been within the paid ranks: fewer eligible players
    than the table pays ranks had more points than they."""
    paid = rows[-1].rank_to
    ahead = 0
    out: list[rules.Standing] = []
    for _, run in groupby(ranked, key=lambda s: s.points):
        tied = list(run)
        out += [s for s in tied if s.player in ineligible and ahead < paid]
        ahead += sum(1 for s in tied if s.player not in ineligible)
    return out


def _target(rows: tuple[PrizeRow, ...]) -> tuple[Tournament | None, Decimal]:
    """The seats' target share-locked while it takes tickets (else None: its seats are paid
    their value in money), and a seat's value (its entry fee; 0 without ticket rows)."""
    slug = next((row.target for row in rows if row.kind == TICKET), None)
    if slug is None:
        return None, ZERO
    target = next(  # share-locked, as tickets.py takes it: registrations go on
        iter(
            Tournament.objects.raw(
                f"SELECT * FROM {Tournament._meta.db_table} WHERE slug = %s FOR SHARE", [slug]
            )
        )
    )
    registering = target.status == Tournament.Status.REGISTERING
    return (target if registering else None), target.entry_fee


@transaction.atomic
def leaderboard_pay(*, leaderboard_id: int, now: datetime | None = None) -> int:
    """Pay one ended leaderboard (1), or nothing when it is paid already or still running (0)."""
    now = now or timezone.now()
    board = Leaderboard.objects.select_for_update().get(pk=leaderboard_id)
    if board.status == Leaderboard.Status.PAID or board.ends_at > now:
        return 0
    ranked = standings_of(board)
    players = dict(
        Player.objects.filter(external_id__in=[s.player for s in ranked]).values_list(
            "external_id", "pk"
        )
    )
    ineligible = _ineligible(list(players.values()), now)
    rows = leaderboard_rows(board)
    target, seat_value = _target(rows)
    eligible = [s for s in ranked if players[s.player] not in ineligible]
    plan = rules.prize_plan(eligible, rows, seat_value)
    skipped = _skipped(ranked, {s.player for s in ranked if players[s.player] in ineligible}, rows)
    money = dict(plan.money)
    seated: list[str] = []
    if plan.tickets:
        free = (
            seat_payees_of(target, list(Player.objects.filter(external_id__in=plan.tickets)))
            if target is not None
            else set()
        )
        for player in plan.tickets:
            if players[player] in free:
                seated.append(player)
            else:  # holds a ticket already, is registered, or the target no longer registers
                money[player] = seat_value
    transfer = _prizes_post(board, players, money, seated, target, seat_value)
    if seated:
        Ticket.objects.bulk_create(
            Ticket(
                tournament=target,
                player_id=players[p],
                value=seat_value,
                source=Ticket.Source.LEADERBOARD,
                leaderboard=board,
            )
            for p in seated
        )
    LeaderboardSkip.objects.bulk_create(
        LeaderboardSkip(
            leaderboard=board,
            player_id=players[s.player],
            rank=s.rank,
            points=s.points,
            reason=ineligible[players[s.player]],
        )
        for s in skipped
    )
    board.status = Leaderboard.Status.PAID
    board.paid_at = now
    board.transfer_id = transfer
    board.prizes_paid = sum(money.values(), ZERO) + seat_value * len(seated)
    board.save(update_fields=["status", "paid_at", "transfer", "prizes_paid"])
    return 1


def _prizes_post(
    board: Leaderboard,
    players: dict[str, int],
    money: dict[str, Decimal],
    seated: list[str],
    target: Tournament | None,
    seat_value: Decimal,
) -> int | None:
    """Every prize in one transfer from promotions; None when nobody won anything."""
    currency = board.currency
    bucket = Bucket.CHIPS if currency == CHIPS else Bucket.WINNINGS
    accounts = dict(
        Account.objects.filter(
            player_id__in=[players[p] for p in money], kind=Account.Kind.PLAYER, bucket=bucket
        ).values_list("player_id", "pk")
    )
    credits: dict[int, Decimal] = defaultdict(Decimal)
    for player, amount in money.items():
        credits[accounts[players[player]]] += amount
    if seated:
        credits[target.tickets_account_id] += seat_value * len(seated)
    total = sum(credits.values(), ZERO)
    if total == 0:
        return None
    legs = [Leg(promotions_account_id(currency), -Money(total, currency))]
    legs += [Leg(pk, Money(amount, currency)) for pk, amount in sorted(credits.items())]
    posted = transfers_post(
        requests=[
            TransferRequest(
                kind=Transfer.Kind.BONUS,
                reference=leaderboard_reference(board.pk),
                idempotency_key=leaderboard_key(board.pk, "prizes"),
                legs=legs,
                memo=f"prizes of leaderboard {board.slug}",
            )
        ]
    )
    return posted[0].transfer_id
