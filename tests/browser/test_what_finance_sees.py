"""What a finance user sees on the pages a review found wrong, in a real browser. These were
strict expected failures (`test_known_gaps.py`) until each was fixed; a new gap found by the
browser goes here the same way: a test that states what should be seen, marked
`xfail(strict=True, raises=AssertionError)` until its fix lands.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

import pytest
from django.db.models import Sum
from django.utils import timezone

from tests.browser.conftest import GAME_ID
from tests.builders import bonus_granted, staff
from tournaments.games.queries import game_transfer_ids
from wallets.models import Entry, Player, Reversal
from wallets.money.formatting import money
from wallets.services.proposals import proposal_decide
from wallets.services.protection import limits_set, self_exclusion_start
from wallets.services.reversals import reversal_propose

pytestmark = pytest.mark.django_db(transaction=True)


def test_platform_accounts_list_shows_the_real_balance(login, game):
    tab = login("viewer")
    tab.visit("/admin/wallets/account/?kind__exact=platform", "accounts-platform")

    row = tab.page.locator("#result_list tbody tr", has_text="fee_revenue")

    assert money(game.fee, "INR") in row.inner_text()


def test_the_approver_sees_what_a_reversal_moves(login, game):
    approver = login("approver")
    ids = game_transfer_ids(game)
    proposal = reversal_propose(
        proposed_by=staff("operator", "finance operator"),
        reference=f"game:{game.pk}",
        transfer_ids=ids,
        reason="collusion",
    )
    moved = defaultdict(int)
    for row in (
        Entry.objects.filter(transfer_id__in=ids)
        .values("account__code", "amount_currency")
        .annotate(total=Sum("amount"))
    ):
        if row["total"]:
            moved[(row["account__code"], row["amount_currency"])] -= row["total"]

    approver.visit(f"/admin/wallets/reversal/{proposal.pk}/change/", "reversal-amounts")

    page = approver.text()
    for (_, currency), change in moved.items():
        assert money(abs(change), currency) in page


def test_a_viewer_is_not_offered_a_reversal(login, game):
    tab = login("viewer")
    tab.visit(f"/admin/tournaments/game/{game.pk}/change/", "game")

    assert tab.page.locator("text=Propose a reversal").count() == 0


def test_a_refusal_is_the_admins_styled_page(login, game):
    tab = login("viewer")
    with tab.refused(403):
        tab.page.goto(f"{tab.base_url}/admin/tournaments/game/{game.pk}/propose-reversal/")
        tab.shot("propose-reversal-refused")

    assert tab.page.locator("#header").count() == 1


def test_the_admin_names_the_product(login):
    tab = login("viewer")

    assert "Django administration" not in tab.text("#header")


def test_the_admin_names_its_icon(login):
    tab = login("viewer")

    named = tab.page.locator("link[rel~='icon']").count() > 0
    assert named or tab.page.request.get(f"{tab.base_url}/favicon.ico").ok


def test_the_transfers_list_says_what_moved(login, game):
    tab = login("viewer")
    tab.visit(f"/admin/wallets/transfer/?q=game:{game.pk}", "game-transfers")

    rows = tab.text("#result_list")

    assert GAME_ID in rows and "₹" in rows


def test_the_game_page_tells_time_in_ist(login, game):
    tab = login("viewer")
    tab.visit(f"/admin/tournaments/game/{game.pk}/change/", "game")

    created = timezone.localtime(game.created_at).strftime("%Y-%m-%d %H:%M:%S IST")
    assert created in tab.text() and "+00:00" not in tab.text()


def test_the_game_page_reads_in_words(login, game):
    tab = login("viewer")
    tab.visit(f"/admin/tournaments/game/{game.pk}/change/", "game")

    players = tab.text(".inline-group")
    assert '[["' not in players and tab.page.locator(".inline-group td.original p").count() == 0


def test_the_fee_report_is_linked_from_the_index(login):
    tab = login("viewer")

    assert tab.page.locator("#content-main a", has_text="Fee").count() > 0


def test_a_reversed_game_says_so(login, game):
    proposal = reversal_propose(
        proposed_by=staff("operator", "finance operator"),
        reference=f"game:{game.pk}",
        transfer_ids=game_transfer_ids(game),
        reason="collusion",
    )
    proposal_decide(
        model=Reversal,
        proposal_id=proposal.pk,
        approve=True,
        decided_by=staff("approver", "finance approver"),
    )
    tab = login("viewer")
    tab.visit(f"/admin/tournaments/game/{game.pk}/change/", "game-reversed")

    assert "reversed" in tab.text(".field-status").lower()
    assert "reversed" in tab.text(".field-books").lower()


def test_the_player_page_shows_bonus_lots_and_protection(login, game):
    bonus_granted("a", "25.00")
    limits_set(
        player_external_id="a",
        daily_limit=Decimal("1000.00"),
        monthly_limit=Decimal("20000.00"),
        changed_by="gateway",
    )
    limits_set(
        player_external_id="a",
        daily_limit=Decimal("5000.00"),
        monthly_limit=Decimal("20000.00"),
        changed_by="gateway",
    )
    self_exclusion_start(player_external_id="a", days=30, changed_by="gateway")
    player = Player.objects.get(external_id="a")
    tab = login("viewer")

    tab.visit(f"/admin/wallets/player/{player.pk}/change/", "player-protection")

    page = tab.text()
    assert "deposit limits: daily ₹1,000.00, monthly ₹20,000.00; daily limit ₹5,000.00 from" in page
    assert "self-excluded until" in page
    assert money(Decimal("25.00"), "INR") in page
    assert tab.page.locator("form input[type=submit]").count() == 0  # nothing to edit or lift
