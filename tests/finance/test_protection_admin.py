"""Finance sees bonus lots and player protection on the player's page, grants bonus through the
maker-checker, and cannot change or lift a self-exclusion."""

from decimal import Decimal

import pytest
from django.urls import reverse

from tests.builders import bonus_granted, staff_client
from wallets.models import Account, BonusGrant, Player, ProtectionChange
from wallets.services.protection import limits_set, self_exclusion_start

pytestmark = pytest.mark.django_db


def test_the_player_page_shows_protection_bonus_lots_and_history(viewer, alice):
    bonus_granted("alice", "25.00")
    limits_set(
        player_external_id="alice",
        daily_limit=Decimal("500.00"),
        monthly_limit=None,
        changed_by="gateway",
    )
    self_exclusion_start(player_external_id="alice", days=30, changed_by="gateway")
    player = Player.objects.get(external_id="alice")

    page = staff_client(viewer).get(reverse("admin:wallets_player_change", args=[player.pk]))

    html = page.content.decode().lower()
    assert page.status_code == 200
    assert "deposit limits: daily ₹500.00, monthly none" in html
    assert "self-excluded until" in html
    assert "bonus lots" in html and "25.00" in html
    assert "protection history" in html and "self-exclusion" in html


@pytest.mark.parametrize("user", ["viewer", "operator", "approver", "superuser"])
def test_no_one_can_change_or_delete_a_self_exclusion_in_admin(request, user, alice):
    self_exclusion_start(player_external_id="alice", days=None, changed_by="gateway")
    change = ProtectionChange.objects.get()
    client = staff_client(request.getfixturevalue(user))
    url = reverse("admin:wallets_protectionchange_change", args=[change.pk])

    client.post(url, {"new_value": ""})
    client.post(reverse("admin:wallets_protectionchange_delete", args=[change.pk]), {"post": "yes"})

    assert ProtectionChange.objects.get().new_value == "permanent"


def test_a_bonus_grant_is_proposed_in_admin_and_approved_by_someone_else(operator, approver, alice):
    player = Player.objects.get(external_id="alice")
    add = staff_client(operator).post(
        reverse("admin:wallets_bonusgrant_add"),
        {"player": player.pk, "amount_value": "40.00", "reason": "welcome back"},
    )
    assert add.status_code == 302, add.content.decode()[-2000:]
    grant = BonusGrant.objects.get()
    assert Account.objects.get(code="player:alice:bonus").balance.amount == 0

    staff_client(approver).post(
        reverse("admin:wallets_bonusgrant_decide", args=[grant.pk]), {"decision": "approve"}
    )

    assert Account.objects.get(code="player:alice:bonus").balance.amount == Decimal("40.00")
    assert BonusGrant.objects.get().status == "approved"


def test_finance_replaces_a_blocked_region_in_admin_and_the_history_says_so(
    viewer, operator, settings
):
    """A player's region is the most restrictive one reported until finance changes
    it; only a role holding the permission may, and every change is in the history."""
    from tests.builders import make_api
    from tests.wallets.payments import Gateway

    settings.REAL_MONEY = "restricted"
    settings.REAL_MONEY_BLOCKED_REGIONS = frozenset({"TN"})
    gateway = Gateway(make_api("payments", name="gateway")[0])
    assert gateway.deposit("p", "100.00", region="TN").status_code == 409  # recorded: TN
    player = Player.objects.get(external_id="p")
    page_url = reverse("admin:wallets_player_change", args=[player.pk])
    url = reverse("admin:wallets_player_region", args=[player.pk])

    assert "Set region" not in staff_client(viewer).get(page_url).content.decode()
    assert staff_client(viewer).post(url, {"region": "KA"}).status_code == 403
    assert 'form="region-form"' in staff_client(operator).get(page_url).content.decode()
    refused = staff_client(operator).post(url, {"region": "ZZ"}, follow=True)
    assert "Region not set: &#x27;ZZ&#x27; is not an ISO 3166-2:IN" in refused.content.decode()
    done = staff_client(operator).post(url, {"region": "KA"}, follow=True)

    assert "Region set to KA (Karnataka)." in done.content.decode()
    player.refresh_from_db()
    assert player.region == "KA"
    assert gateway.deposit("p", "100.00").status_code == 201  # real money is on for KA
    history = ProtectionChange.objects.filter(player=player, kind="region").order_by("pk")
    assert [(c.old_value, c.new_value, c.changed_by) for c in history] == [
        ("", "TN", "gateway"),
        ("TN", "KA", "operator (finance)"),
    ]


def test_setting_the_region_of_no_player_is_404(operator):
    url = reverse("admin:wallets_player_region", args=[999999])

    assert staff_client(operator).post(url, {"region": "KA"}).status_code == 404
