"""Finance's leaderboard pages in a real browser: a new leaderboard proposed by one person (a
bad prize table refused on the form first) and approved by another, the maker unable to approve
their own; the list and a paid leaderboard's page (standings, the prize transfer, the player
its payout skipped), read-only for everyone."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from tests.browser.test_finance_paths import QUICK_MS
from tests.builders import Server, funded_player, template
from tests.tournaments.leaderboards.builders import board, week_passes
from tests.tournaments.tournament_builders import scheduled
from tournaments.leaderboards.services.payout import leaderboards_due_pay
from tournaments.models import Leaderboard, LeaderboardPoints, NewLeaderboard
from wallets.models import Player
from wallets.months import INDIA
from wallets.services.protection import self_exclusion_start

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_leaderboard_is_proposed_and_approved_by_two_people(login):
    Server(name="lobby")
    template("points-2", "points")
    scheduled(slug="sunday-100")  # its games count too
    maker = login("operator-approver")  # may approve, but never their own
    maker.visit("/admin/tournaments/leaderboard/", "leaderboards-empty")
    maker.page.click("text=Propose a new leaderboard")
    maker.shot("new-leaderboard-add")
    first = timezone.now().astimezone(INDIA).date()
    boxes = {
        "slug": "diwali-week", "name": "Diwali week", "first_day": first.isoformat(),
        "last_day": (first + timedelta(days=6)).isoformat(), "templates": "points-2",
        "tournaments": "sunday-100", "win_divisor": "100.00", "loss_divisor": "200.00",
        "prizes": "1 1000.00\n3 100.00", "reason": "Diwali promotion",
    }  # fmt: skip
    for name, value in boxes.items():
        maker.page.fill(f"#id_{name}", value)
    maker.page.select_option("#id_client", "lobby")
    maker.page.select_option("#id_scoring", "results")
    maker.page.click("input[name=_save]")
    maker.shot("new-leaderboard-refused")
    assert "the ranks follow each other from 1 without gaps" in maker.text(".errorlist")
    assert not NewLeaderboard.objects.exists()
    maker.page.fill("#id_prizes", "1 1000.00\n2-3 100.00")
    maker.page.click("input[name=_save]")
    maker.shot("new-leaderboard-proposed")
    proposal = NewLeaderboard.objects.get()
    maker.visit(f"/admin/tournaments/newleaderboard/{proposal.pk}/change/", "new-leaderboard")
    assert maker.page.locator("#decision").count() == 0 and "You proposed this" in maker.text()

    approver = login("approver")
    approver.visit(f"/admin/tournaments/newleaderboard/{proposal.pk}/change/", "new-leaderboard")
    text = approver.text()
    assert "winnings ÷ 100.00 + losses ÷ 200.00" in text and "2-3: ₹100.00 each" in text
    assert "tournaments: sunday-100" in text
    with approver.page.expect_navigation(timeout=QUICK_MS):
        approver.page.click("#decision button[value=approve]")
    approver.shot("new-leaderboard-approved")
    assert f"#{proposal.pk} approved" in approver.messages()
    created = Leaderboard.objects.get(slug="diwali-week")
    assert created.starts_at.astimezone(INDIA).date() == first
    assert created.ends_at - created.starts_at == timedelta(days=7)
    assert (created.templates, created.tournaments) == (["points-2"], ["sunday-100"])

    viewer = login("viewer")
    viewer.visit("/admin/tournaments/leaderboard/", "leaderboards")
    assert viewer.page.locator("text=Propose a new leaderboard").count() == 0


@pytest.mark.parametrize("role", ["viewer", "operator", "approver"])
def test_finance_sees_a_paid_leaderboard_and_whom_it_skipped(login, role):
    Server()
    template("points-2", "points")
    week = board()
    for player, points in (("ana", "12.00"), ("bo", "9.50"), ("cy", "9.50"), ("di", "3.00")):
        funded_player(player, "0")
        LeaderboardPoints.objects.create(
            leaderboard=week,
            player=Player.objects.get(external_id=player),
            points=Decimal(points),
            updated_at=timezone.now(),
        )
    self_exclusion_start(player_external_id="ana", days=30, changed_by="test")
    week_passes(week)
    leaderboards_due_pay()
    tab = login(role)
    tab.visit("/admin/tournaments/leaderboard/", f"leaderboards--{role}")
    row = tab.page.locator("#result_list tbody tr", has_text="week-1").inner_text()
    assert "Paid" in row and "₹1,600.00" in row
    tab.page.click("#result_list tbody tr a:has-text('week-1')")
    tab.shot(f"leaderboard--{role}")
    text = tab.text()
    assert "self excluded" in text.lower() or "self_excluded" in text
    assert "1 ana 12.00 points" in " ".join(tab.text(".field-standings").split())
    tab.page.click(".field-prize_transfer a")
    tab.shot(f"leaderboard-transfer--{role}")
    assert f"leaderboard:{week.pk}" in tab.text()
