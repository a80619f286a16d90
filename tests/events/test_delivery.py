"""The delivery run in-process against a real receiver (rummy_ledger/events/webhooks/
delivery.py): the retry schedule, the lease of a claimed delivery, a day of failures disabling
the endpoint, and the address rules checked again at delivery."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from rummy_ledger.events.models import Delivery, WebhookEndpoint
from rummy_ledger.events.record import Happened, events_record
from rummy_ledger.events.webhooks import delivery
from rummy_ledger.events.webhooks.endpoints import endpoint_create
from tests.builders import make_api
from tests.events.receiver import Receiver
from tests.events.test_feed import TEST_TYPE, Made, caught_up, fake_renderer  # noqa: F401 (a fixture)
from tests.tournaments.worker import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def client(fake_renderer):  # noqa: F811
    return make_api("games", name="hooked")[1]


def recorded(client, n: int = 1) -> None:
    with transaction.atomic():
        events_record([Happened(TEST_TYPE, client.pk, Made(i)) for i in range(n)])
    assert wait_until(caught_up, 20)  # readable: no older transaction runs on the server


def test_the_retry_schedule_starts_within_10_s_and_backs_off_to_an_hour(settings):
    delays = [delivery.retry_delay(n) for n in range(1, 12)]

    assert delays[0] <= 10 and delays[:4] == [5, 15, 45, 135]
    assert delays == sorted(delays) and max(delays) == 3600 == delays[-1]
    assert sum(delays) < 24 * 3600  # retried for the whole day, not stopped by the schedule


def test_an_event_is_fanned_out_once_and_a_claimed_delivery_is_leased(client):
    with Receiver(500) as receiver:
        endpoint, _ = endpoint_create(client=client, url=receiver.url, types=[TEST_TYPE])
        recorded(client, 3)

        assert delivery.deliveries_fan_out() == 3
        assert delivery.deliveries_fan_out() == 0  # the cursor moved on
        claimed = delivery.deliveries_claim(limit=10)
        assert len(claimed) == 3
        assert delivery.deliveries_claim(limit=10) == []  # leased: no one else takes them
        Delivery.objects.update(due_at=timezone.now())  # the lease ran out (a killed worker)
        again = delivery.deliveries_claim(limit=10)

    assert sorted(d.pk for d in again) == sorted(d.pk for d in claimed)
    assert set(Delivery.objects.values_list("attempts", flat=True)) == {2}
    assert Delivery.objects.filter(endpoint=endpoint).count() == 3


def test_a_day_of_failures_fails_the_delivery_and_disables_the_endpoint(client):
    with Receiver(500) as receiver:
        endpoint, _ = endpoint_create(client=client, url=receiver.url, types=[TEST_TYPE])
        recorded(client)
        delivery.deliveries_fan_out()
        Delivery.objects.update(retries_since=timezone.now() - timedelta(hours=24, seconds=1))

        run = delivery.deliveries_run()

    assert (run.claimed, run.failed, run.delivered) == (1, 1, 0)
    failed = Delivery.objects.get()
    assert (failed.status, failed.last_status, failed.last_answer) == ("failed", 500, "ok")
    assert WebhookEndpoint.objects.get(pk=endpoint.pk).disabled_at is not None


def test_a_failure_retried_soon_and_a_success_ends_it(client):
    with Receiver(503, 204) as receiver:
        endpoint_create(client=client, url=receiver.url, types=[TEST_TYPE])
        recorded(client)

        first = delivery.deliveries_run()
        pending = Delivery.objects.get()
        Delivery.objects.update(due_at=timezone.now())
        second = delivery.deliveries_run()

    assert (first.retry_in, pending.status, pending.last_status) == (5, "pending", 503)
    assert 0 < (pending.due_at - pending.last_attempt_at).total_seconds() <= 10
    assert second.delivered == 1
    done = Delivery.objects.get()
    assert (done.status, done.attempts, done.last_status) == ("delivered", 2, 204)
    assert [json.loads(r.body)["data"] for r in receiver.received] == [{"n": 0}, {"n": 0}]


def test_an_address_refused_at_delivery_is_not_connected_to(client, settings):
    with Receiver(200) as receiver:
        endpoint_create(client=client, url=receiver.url, types=[TEST_TYPE])
        recorded(client)
        settings.WEBHOOK_ALLOWED_HOSTS = frozenset()  # 127.0.0.1 is no longer allowed

        delivery.deliveries_run()

    refused = Delivery.objects.get()
    assert receiver.received == []
    assert refused.status == "pending" and refused.last_status is None
    assert "https only" in refused.last_answer


def test_a_deleted_endpoint_is_sent_nothing(client):
    with Receiver(200) as receiver:
        endpoint, _ = endpoint_create(client=client, url=receiver.url, types=[TEST_TYPE])
        recorded(client)
        delivery.deliveries_fan_out()
        WebhookEndpoint.objects.filter(pk=endpoint.pk).update(deleted_at=timezone.now())

        run = delivery.deliveries_run()

    assert run.claimed == 0 and receiver.received == []
