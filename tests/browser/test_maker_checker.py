"""Maker-checker in a real browser: nobody moves money or changes what games cost alone.

- A template's money terms are read-only on its page; an operator proposes new ones, another
  member of staff approves them on the proposal's page, and the template's page keeps the story.
- API keys (a `payments` key credits deposits) are issued by superusers only: a finance role
  sees no button, and the page refuses them with the admin's own 403.
- A debit no approver could ever approve is refused while it is proposed, on the form.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from rummy_ledger.api.models import ApiClient
from tests.browser.test_finance_paths import QUICK_MS, fill_adjustment
from tournaments.models import GameTemplate, TemplateChange
from wallets.models import Adjustment

pytestmark = pytest.mark.django_db(transaction=True)


def test_new_money_terms_are_proposed_and_approved_by_two_people(login, game):
    template = GameTemplate.objects.get(slug="points-2")
    operator = login("operator")
    operator.visit(f"/admin/tournaments/gametemplate/{template.pk}/change/", "template")
    assert operator.page.locator("input[name=fee_percent]").count() == 0  # read-only
    operator.page.click("text=Propose new money terms")
    operator.shot("template-change-add")
    assert operator.page.input_value("#id_fee_percent") == "10.00"  # starts from the terms in force
    operator.page.fill("#id_fee_percent", "12.50")
    operator.page.fill("#id_reason", "rake review, Q3")
    operator.page.click("input[name=_save]")
    operator.shot("template-change-proposed")
    change = TemplateChange.objects.get()
    template.refresh_from_db()
    assert change.status == "proposed" and template.fee_percent == Decimal("10.00")

    approver = login("approver")
    approver.visit(f"/admin/tournaments/templatechange/{change.pk}/change/", "template-change")
    assert "fee %: 10.00% → 12.50%" in approver.text()
    with approver.page.expect_navigation(timeout=QUICK_MS):
        approver.page.click("#decision button[value=approve]")
    approver.shot("template-change-approved")

    assert f"#{change.pk} approved" in approver.messages()
    template.refresh_from_db()
    assert template.fee_percent == Decimal("12.50")
    approver.visit(f"/admin/tournaments/gametemplate/{template.pk}/change/", "template-changed")
    assert "12.50%" in approver.text(".field-fee_col")
    assert "approved, proposed by operator" in approver.text(".field-money_terms_history")
    approver.page.click("text=History")
    approver.shot("template-history")
    assert "Terms changed by change" in approver.text()


def test_api_keys_are_issued_by_superusers_only(login):
    operator = login("operator")
    operator.visit("/admin/api/apiclient/", "api-clients")
    assert operator.page.locator(".object-tools a.addlink").count() == 0
    with operator.refused(403):
        response = operator.page.goto(f"{operator.base_url}/admin/api/apiclient/add/")
        operator.shot("api-client-add-refused")
    assert response.status == 403 and operator.page.locator("#header").count() == 1
    assert "Not allowed" in operator.text()

    root = login("superuser")
    root.visit("/admin/api/apiclient/add/", "api-client-add")
    root.page.fill("#id_name", "payment-gateway")
    root.page.check("input[name=scopes][value=payments]")
    root.page.click("input[name=_save]")
    root.shot("api-client-added")
    # the key is on this answer page, never in the (readable) messages cookie
    assert "never be shown again" in root.text() and root.messages() == ""
    assert root.text("#api-key").startswith("rl_")
    assert ApiClient.objects.get(name="payment-gateway").scopes == ["payments"]


def test_a_debit_of_more_than_the_bucket_holds_is_refused_on_the_form(login, game):
    operator = login("operator")
    operator.visit("/admin/wallets/adjustment/add/", "adjustment-add")
    assert "₹" in operator.text("label[for=id_amount_value]")  # the field names the currency
    fill_adjustment(operator, "b", "debit", "99999.00", "chargeback")
    operator.shot("adjustment-debit-refused")

    assert "would take player:b:deposit below zero (it holds ₹" in operator.text("ul.errorlist")
    assert not Adjustment.objects.exists()


def test_finance_sets_a_players_region_with_the_button_on_the_players_page(login, game):
    """A blocked region the gateway reported stays until finance changes it here."""
    from wallets.models import Player, ProtectionChange
    from wallets.services.real_money import region_report

    player = Player.objects.get(external_id="a")
    region_report(player=player, region="TN", changed_by="gateway")
    operator = login("operator")
    operator.visit(f"/admin/wallets/player/{player.pk}/change/", "player-region")
    assert operator.page.evaluate("document.querySelector('#region button').form !== null")

    operator.page.select_option("#id_set_region", "TS")
    with operator.page.expect_navigation(timeout=QUICK_MS):
        operator.page.click("#region button")
    operator.shot("player-region-set")

    assert "Region set to TS (Telangana)." in operator.messages()
    player.refresh_from_db()
    assert player.region == "TS"
    assert ProtectionChange.objects.filter(player=player, new_value="TS").exists()
    viewer = login("viewer")
    viewer.visit(f"/admin/wallets/player/{player.pk}/change/", "player-region")
    assert viewer.page.locator("#region").count() == 0


def test_a_second_approver_on_a_page_opened_before_the_first_decision_is_refused(login, game):
    """The second approver sees "#1 approved." and the admin logs them with
    the first approver's note."""
    from django.contrib.admin.models import LogEntry
    from djmoney.money import Money

    from wallets.models import Player, Transfer
    from wallets.services.adjustments import adjustment_propose

    operator = login("operator")
    adjustment = adjustment_propose(
        proposed_by=operator.user,
        player=Player.objects.get(external_id="b"),
        bucket="deposit",
        direction="credit",
        amount=Money("25.00", "INR"),
        reason="refund of a disconnect",
    )
    page = f"/admin/wallets/adjustment/{adjustment.pk}/change/"
    first, second = login("approver"), login("approver", "approver2")
    first.visit(page, "adjustment")
    second.visit(page, "adjustment")  # both pages show Approve

    first.page.fill("#decision textarea", "ticket 4711")
    with first.page.expect_navigation(timeout=QUICK_MS):
        first.page.click("#decision button[value=approve]")
    logged = LogEntry.objects.count()
    second.page.fill("#decision textarea", "mine")
    with second.page.expect_navigation(timeout=QUICK_MS):
        second.page.click("#decision button[value=approve]")
    second.shot("adjustment-second-approval")

    said = second.messages()
    assert (
        f"#{adjustment.pk} not approved: adjustment #{adjustment.pk} was already approved" in said
    )
    assert f"#{adjustment.pk} approved." not in said
    assert second.page.locator("#decision").count() == 0  # decided: no buttons any more
    assert LogEntry.objects.count() == logged
    adjustment.refresh_from_db()
    assert (adjustment.decided_by, adjustment.decision_note) == (first.user, "ticket 4711")
    assert Transfer.objects.filter(reference=f"adjustment:{adjustment.pk}").count() == 1
