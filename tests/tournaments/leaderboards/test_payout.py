"""The end of a leaderboard: prizes in one transfer from promotions, ties sharing, paid once
however often the job runs; self-excluded players and players in a flagged pair under review
skipped (the prize passes on) and listed; a seat paid as a ticket."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from tests.builders import flagged_pair, funded_player, staff, template
from tests.tournaments.leaderboards.builders import board, week_passes
from tests.tournaments.tournament_builders import scheduled
from tests.wallets.invariants import ledger_violations
from tournaments.leaderboards.services.payout import leaderboards_due_pay
from tournaments.models import Leaderboard, LeaderboardPoints, LeaderboardSkip, Ticket
from tournaments.tournaments.services.tickets import tickets_outstanding
from wallets.models import Entry, FlaggedPair, PairClearance, PlatformAccount, Player, Transfer
from wallets.roles import APPROVER, OPERATOR
from wallets.services.accounts import platform_accounts
from wallets.services.pair_clearances import pair_clearance_propose
from wallets.services.proposals import proposal_decide
from wallets.services.protection import self_exclusion_start

pytestmark = pytest.mark.django_db
D = Decimal


def standings(leaderboard: Leaderboard, **points: str) -> None:
    for player, value in points.items():
        funded_player(player, "0")
        LeaderboardPoints.objects.create(
            leaderboard=leaderboard,
            player=Player.objects.get(external_id=player),
            points=D(value),
            updated_at=timezone.now(),
        )


def winnings(player: str) -> Decimal:
    return funded_player(player, "0")["winnings"].balance.amount


def promotions_out() -> Decimal:
    account = platform_accounts()[PlatformAccount.PROMOTIONS]
    return -sum(Entry.objects.filter(account=account).values_list("amount", flat=True), D(0))


def test_ties_share_the_ranks_they_span_and_it_pays_once(server):
    template("points-2", "points")
    week = board()
    standings(week, p1="30.00", p2="20.00", p3="20.00", p4="5.00", p5="5.00", p6="1.00")
    assert leaderboards_due_pay() == 0  # still running: nothing paid
    week_passes(week)
    # when: the job runs twice
    assert leaderboards_due_pay() == 1
    assert leaderboards_due_pay() == 0
    # then: 1000 to p1; p2 and p3 share ranks 2-3 (500 + 100); p4, p5 and p6 nothing
    assert {p: winnings(p) for p in ("p1", "p2", "p3", "p4", "p5", "p6")} == {
        "p1": D("1000.00"), "p2": D("300.00"), "p3": D("300.00"),
        "p4": D("0.00"), "p5": D("0.00"), "p6": D("0.00"),
    }  # fmt: skip
    week.refresh_from_db()
    assert (week.status, week.prizes_paid) == ("paid", D("1600.00"))
    [transfer] = Transfer.objects.filter(reference=f"leaderboard:{week.pk}")
    assert transfer.pk == week.transfer_id and transfer.kind == "bonus"
    assert promotions_out() == D("1600.00")
    assert ledger_violations() == []


def test_the_skipped_pass_their_prize_on_and_are_listed(server):
    template("points-2", "points")
    week = board()
    standings(week, p1="30.00", p2="20.00", p3="10.00", p4="5.00", p5="4.00", x="1.00", y="1.00")
    self_exclusion_start(player_external_id="p1", days=30, changed_by="test")
    flagged_pair("p3", "x", FlaggedPair.Review.UNDER_REVIEW)
    flagged_pair("p4", "y", FlaggedPair.Review.CLEARED)  # the latest report: p3 is in no pair now
    week_passes(week)
    # when
    assert leaderboards_due_pay() == 1
    # then: p2 first, p3 (cleared with the latest report) second, p4 third
    paid = {p: winnings(p) for p in ("p1", "p2", "p3", "p4", "p5")}
    assert paid == {
        "p1": D("0.00"), "p2": D("1000.00"), "p3": D("500.00"), "p4": D("100.00"),
        "p5": D("0.00"),
    }  # fmt: skip
    skips = LeaderboardSkip.objects.filter(leaderboard=week)
    assert [(s.player.external_id, s.rank, s.points, s.reason) for s in skips] == [
        ("p1", 1, D("30.00"), "self_excluded")
    ]


def test_a_pair_under_review_is_skipped(server):
    template("points-2", "points")
    week = board()
    standings(week, p1="30.00", p2="20.00", p3="10.00", p4="5.00")
    flagged_pair("p2", "p4", FlaggedPair.Review.UNDER_REVIEW)
    week_passes(week)
    assert leaderboards_due_pay() == 1
    assert [winnings(p) for p in ("p1", "p2", "p3", "p4")] == [
        D("1000.00"), D("0.00"), D("500.00"), D("0.00"),
    ]  # fmt: skip
    skips = LeaderboardSkip.objects.filter(leaderboard=week)
    assert [(s.player.external_id, s.reason) for s in skips] == [
        ("p2", "flagged_pair"), ("p4", "flagged_pair"),
    ]  # fmt: skip


def test_a_pair_finance_cleared_is_paid_by_a_later_payout(server):
    template("points-2", "points")
    week, later = board(), board(slug="week-2")
    standings(week, p1="30.00", p2="20.00", p3="10.00", p4="5.00")
    standings(later, p2="20.00", p1="10.00")
    pair = flagged_pair("p2", "p4")
    week_passes(week)
    assert leaderboards_due_pay() == 1  # p2 skipped
    # when: an operator proposes clearing the pair and an approver approves
    clearance = pair_clearance_propose(
        proposed_by=staff("maker", OPERATOR), pair=pair, reason="friends at one table, reviewed"
    )
    proposal_decide(
        model=PairClearance, proposal_id=clearance.pk, decided_by=staff("checker", APPROVER),
        approve=True,
    )  # fmt: skip
    pair.refresh_from_db()
    assert pair.review == FlaggedPair.Review.CLEARED
    week_passes(later)
    assert leaderboards_due_pay() == 1
    # then: the later payout pays p2 first (1000 + nothing from the first week)
    assert winnings("p2") == D("1000.00")
    assert not LeaderboardSkip.objects.filter(leaderboard=later).exists()


def test_a_seat_is_a_ticket_from_promotions_and_a_holder_gets_its_value(server):
    template("points-2", "points")
    scheduled(
        slug="main-100", client="game-server-1", rebuy=None, guarantee="0.00", min_players=2,
        max_players=6,
        rounds=[{"final": True}], prizes=[{"ranks": "1", "percent": "100.00"}],
        registration_closes_at=(timezone.now() + timedelta(days=30)).isoformat(),
    )  # fmt: skip
    prizes = [
        {"ranks": "1-2", "kind": "ticket", "tournament": "main-100"},
        {"ranks": "3", "amount": "50.00"},
    ]
    week = board(prizes=prizes)
    holder = board(slug="earlier", prizes=prizes)
    standings(holder, p2="9.00")
    week_passes(holder)
    assert leaderboards_due_pay() == 1  # p2 holds a ticket now
    standings(week, p1="30.00", p2="20.00", p3="10.00")
    week_passes(week)
    # when
    assert leaderboards_due_pay() == 1
    # then
    tickets = Ticket.objects.filter(leaderboard=week)
    assert [(t.player.external_id, t.value, t.status, t.source) for t in tickets] == [
        ("p1", D("100.00"), "active", "leaderboard")
    ]
    assert [winnings(p) for p in ("p1", "p2", "p3")] == [D("0.00"), D("100.00"), D("50.00")]
    assert tickets_outstanding("INR") == (D("200.00"), D("200.00"))
    assert promotions_out() == D("350.00")
    assert ledger_violations() == []
