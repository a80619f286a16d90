"""A superuser pairs clients and turns a games client's guards on, in a real browser
(docs/trust-model.md); a finance role is not offered either."""

from __future__ import annotations

from decimal import Decimal

import pytest

from rummy_ledger.api.keys import api_client_create
from rummy_ledger.api.models import ApiClient
from wallets.models import ClientPairing

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_superuser_pairs_clients_and_turns_the_guards_on(login):
    games, _ = api_client_create(name="lobby", scopes=["games"])
    gateway, _ = api_client_create(name="gateway", scopes=["payments"])
    tab = login("superuser")

    tab.visit("/admin/wallets/clientpairing/add/", "pairing-add")
    tab.page.select_option("#id_games_client", label="lobby")
    tab.page.select_option("#id_payments_client", label="gateway")
    tab.page.click("input[name=_save]")
    tab.page.wait_for_url("**/admin/wallets/clientpairing/")
    tab.shot("pairings")

    pairing = ClientPairing.objects.get()
    assert (pairing.games_client, pairing.payments_client) == (games, gateway)
    assert pairing.created_by == tab.user
    assert "lobby seats players of gateway" in tab.messages()

    tab.visit(f"/admin/api/apiclient/{games.pk}/change/", "client-guards")
    tab.page.check("#id_paired_players_only")
    tab.page.fill("#id_hourly_escrow_cap", "5000.00")
    tab.page.click("input[name=_save]")
    tab.page.wait_for_url("**/admin/api/apiclient/")
    tab.shot("client-guarded")

    games.refresh_from_db()
    assert games.paired_players_only and games.hourly_escrow_cap == Decimal("5000.00")


def test_a_pairing_of_a_client_without_the_scope_is_refused_on_the_form(login):
    api_client_create(name="lobby", scopes=["games"])
    tab = login("superuser")

    tab.visit("/admin/wallets/clientpairing/add/", "pairing-refused")
    tab.page.select_option("#id_games_client", label="lobby")
    tab.page.select_option("#id_payments_client", label="lobby")
    tab.page.click("input[name=_save]")
    tab.page.wait_for_load_state("load")
    tab.shot("pairing-refused")

    assert "This client has no payments scope." in tab.text()
    assert not ClientPairing.objects.exists()


def test_finance_roles_are_not_offered_pairings_or_guards(login):
    games, _ = api_client_create(name="lobby", scopes=["games"])
    tab = login("operator-approver")

    tab.visit("/admin/wallets/clientpairing/", "pairings-operator")
    assert tab.page.locator(".object-tools a.addlink").count() == 0
    tab.visit(f"/admin/api/apiclient/{games.pk}/change/", "client-operator")
    assert tab.page.locator("#id_paired_players_only").count() == 0
    assert not ApiClient.objects.get(pk=games.pk).paired_players_only
