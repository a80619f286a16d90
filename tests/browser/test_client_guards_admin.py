"""A superuser pairs clients, turns a games client's guards on and sets a client's rate limit, in
a real browser (docs/trust-model.md); a finance role is not offered any of them."""

from __future__ import annotations

from decimal import Decimal

import pytest
import requests
from django.contrib.admin.models import CHANGE, LogEntry

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
    assert tab.page.locator("#id_rate_limit").count() == 0
    assert not ApiClient.objects.get(pk=games.pk).paired_players_only


def test_a_superuser_sets_a_clients_rate_limit_and_it_holds_at_once(
    login, live_server, rate_limits, settings
):
    settings.API_RATE_BURST_SECONDS = 1
    lobby, key = api_client_create(name="lobby", scopes=["games"])
    tab = login("superuser")

    tab.visit(f"/admin/api/apiclient/{lobby.pk}/change/", "client-rate-limit")
    tab.page.fill("#id_rate_limit", "1")
    tab.page.click("input[name=_save]")
    tab.page.wait_for_url("**/admin/api/apiclient/")
    tab.shot("client-rate-limited")

    lobby.refresh_from_db()
    assert lobby.rate_limit == 1
    change = LogEntry.objects.get(object_id=str(lobby.pk), action_flag=CHANGE)
    assert change.user == tab.user and "Rate limit" in change.get_change_message()
    row = tab.page.locator("#result_list tr", has_text="lobby")
    assert row.locator("td.field-rate_limit").inner_text() == "1"
    headers = {"Authorization": f"Api-Key {key}"}
    statuses = [
        requests.get(f"{live_server.url}/api/v1/templates", headers=headers, timeout=10)
        for _ in range(2)
    ]  # a second token only a second later: the saved client is read again at once
    assert [s.status_code for s in statuses] == [200, 429]
    assert statuses[1].json()["error"]["code"] == "rate_limited"


def test_a_rate_limit_out_of_bounds_is_refused_on_the_form(login):
    lobby, _ = api_client_create(name="lobby", scopes=["games"])
    tab = login("superuser")

    tab.visit(f"/admin/api/apiclient/{lobby.pk}/change/", "client-rate-limit-bounds")
    tab.page.fill("#id_rate_limit", "0")
    tab.page.click("input[name=_save]")
    tab.page.wait_for_load_state("load")
    tab.shot("client-rate-limit-refused")

    assert "greater than or equal to 1" in tab.text()
    lobby.refresh_from_db()
    assert lobby.rate_limit is None
