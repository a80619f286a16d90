"""Finance sees the clients' webhook endpoints and deliveries in a real browser: a disabled
endpoint on the home page, its deliveries with their last answer; a viewer may only look, an
operator redelivers (the action, chosen and applied), which makes the delivery due now and
enables the endpoint again. The secret is never shown."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from rummy_ledger.api.keys import api_client_create
from rummy_ledger.events.event_types import EventType
from rummy_ledger.events.models import Delivery, Event, WebhookEndpoint

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def failed_delivery() -> Delivery:
    """An endpoint disabled after a day of 500s, and its failed delivery."""
    client, _ = api_client_create(name="gateway", scopes=["payments"])
    with transaction.atomic():
        endpoint = WebhookEndpoint.objects.create(
            client=client,
            url="https://hooks.example.com/rummy",
            types=["deposit.credited"],
            secret="whsec_never_shown",
            txid=0,
            disabled_at=timezone.now(),
        )
        event = Event.objects.create(
            client=client, type=EventType.DEPOSIT_CREDITED, data={"player_id": "asha"}
        )
        a_day_ago = timezone.now() - timedelta(hours=25)
        return Delivery.objects.create(
            endpoint=endpoint,
            event=event,
            status=Delivery.Status.FAILED,
            due_at=a_day_ago,
            retries_since=a_day_ago,
            attempts=27,
            last_attempt_at=timezone.now(),
            last_status=500,
            last_answer="upstream down",
        )


def test_a_viewer_sees_the_disabled_endpoint_and_its_deliveries_and_cannot_redeliver(
    login, failed_delivery
):
    tab = login("viewer")

    home = tab.text()
    assert "Webhook endpoints disabled" in home
    tab.page.click("text=Webhook endpoints disabled")
    tab.page.wait_for_url("**/admin/events/webhookendpoint/?state=disabled")
    tab.shot("webhook-endpoints-disabled")
    assert "https://hooks.example.com/rummy" in tab.text()
    assert "disabled" in tab.text()

    with tab.page.expect_navigation():
        tab.page.click(f"a[href*='/webhookendpoint/{failed_delivery.endpoint_id}/change/']")
    tab.shot("webhook-endpoint")
    assert "whsec_never_shown" not in tab.page.content()
    with tab.page.expect_navigation():
        tab.page.click("text=its deliveries")
    assert re.search(r"/admin/events/delivery/\?endpoint__id__exact=\d+$", tab.page.url)
    tab.shot("webhook-deliveries-viewer")
    listed = tab.text()
    assert "deposit.credited" in listed and "upstream down" in listed and "27" in listed
    assert tab.page.locator("select[name=action]").count() == 0  # nothing to do for a viewer

    with tab.page.expect_navigation():
        tab.page.click(f"a[href*='/delivery/{failed_delivery.pk}/change/']")
    tab.shot("webhook-delivery-viewer")
    assert tab.page.locator("input[type=submit]").count() == 0  # read-only


def test_an_operator_redelivers_and_the_endpoint_is_enabled_again(login, failed_delivery):
    tab = login("operator")

    tab.visit("/admin/events/delivery/?status__exact=failed", "webhook-deliveries-operator")
    tab.page.check(f"input[name=_selected_action][value='{failed_delivery.pk}']")
    tab.page.select_option("select[name=action]", "redeliver")
    tab.page.click("button[name=index]")
    tab.page.wait_for_load_state("load")
    tab.shot("webhook-redelivered")

    assert "1 delivery sent again now." in tab.messages()
    delivery = Delivery.objects.get(pk=failed_delivery.pk)
    assert delivery.status == Delivery.Status.PENDING
    assert delivery.due_at <= timezone.now()
    assert WebhookEndpoint.objects.get().disabled_at is None
    tab.visit("/admin/", "index-after-redeliver")
    assert "Webhook endpoints disabled\t0" in tab.text()  # the line stays, now with none
