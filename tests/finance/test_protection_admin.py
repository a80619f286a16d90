"""Finance sees bonus lots and player protection on the player's page, grants bonus through the
maker-checker, and cannot change or lift a self-exclusion."""

from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from tests.builders import bonus_granted
from wallets.models import Account, BonusGrant, Player, ProtectionChange
from wallets.services.protection import limits_set, self_exclusion_start

pytestmark = pytest.mark.django_db


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


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

    page = logged_in(viewer).get(reverse("admin:wallets_player_change", args=[player.pk]))

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
    client = logged_in(request.getfixturevalue(user))
    url = reverse("admin:wallets_protectionchange_change", args=[change.pk])

    client.post(url, {"new_value": ""})
    client.post(reverse("admin:wallets_protectionchange_delete", args=[change.pk]), {"post": "yes"})

    assert ProtectionChange.objects.get().new_value == "permanent"


def test_a_bonus_grant_is_proposed_in_admin_and_approved_by_someone_else(operator, approver, alice):
    player = Player.objects.get(external_id="alice")
    add = logged_in(operator).post(
        reverse("admin:wallets_bonusgrant_add"),
        {"player": player.pk, "amount_value": "40.00", "reason": "welcome back"},
    )
    assert add.status_code == 302, add.content.decode()[-2000:]
    grant = BonusGrant.objects.get()
    assert Account.objects.get(code="player:alice:bonus").balance.amount == 0

    logged_in(approver).post(
        reverse("admin:wallets_bonusgrant_decide", args=[grant.pk]), {"decision": "approve"}
    )

    assert Account.objects.get(code="player:alice:bonus").balance.amount == Decimal("40.00")
    assert BonusGrant.objects.get().status == "approved"
