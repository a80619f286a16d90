"""Webhooks over real HTTP: endpoints registered, listed and deleted by their client only, URLs
checked by the address rules; events POSTed by a real Celery worker (on the webhook queue),
signed, retried within 10 s after a 500."""

from __future__ import annotations

import json
import time
import uuid

import pytest

from rummy_ledger.events.models import Delivery, WebhookEndpoint
from tests.builders import HttpApi
from tests.events.receiver import Receiver
from tests.events.test_docs import snippet_verified
from tests.tournaments.worker import Worker, private_queue, wait_until
from tests.wallets.payments import verified, won

pytestmark = pytest.mark.django_db(transaction=True)

TYPES = ["deposit.credited", "withdrawal.requested"]


@pytest.fixture
def gateway(live_server):
    return HttpApi(live_server.url, "payments", name="gateway")


@pytest.fixture
def worker():
    with private_queue() as queue:
        started = Worker(queue)
        try:
            yield started
        finally:
            started.stop()


def register(api: HttpApi, url: str, types=TYPES, key: str | None = None):
    return api.post("webhook-endpoints", {"url": url, "types": types}, key=key)


def test_an_endpoint_is_registered_once_listed_without_secret_and_deleted(gateway, live_server):
    url = "http://127.0.0.1:9/hooks"

    made = register(gateway, url, key="hook-1")
    again = register(gateway, url, key="hook-1")
    other_body = register(gateway, url, ["deposit.credited"], key="hook-1")
    listed = gateway.send("GET", "webhook-endpoints")

    assert made.status_code == 201, made.text
    endpoint = made.json()
    assert set(endpoint) == {"id", "url", "types", "secret", "created_at", "disabled_at"}
    assert endpoint["secret"].startswith("whsec_") and endpoint["types"] == TYPES
    assert again.status_code == 200 and again.json() == {
        k: v for k, v in endpoint.items() if k != "secret"
    }
    assert other_body.status_code == 409
    assert other_body.json()["error"]["code"] == "idempotency_conflict"
    assert listed.json() == {"endpoints": [again.json()]}

    stranger = HttpApi(live_server.url, "games", name="stranger")
    assert stranger.send("GET", "webhook-endpoints").json() == {"endpoints": []}
    refused = stranger.send("DELETE", f"webhook-endpoints/{endpoint['id']}")
    assert refused.status_code == 404
    assert refused.json()["error"]["code"] == "webhook_endpoint_not_found"
    assert gateway.send("DELETE", f"webhook-endpoints/{endpoint['id']}").status_code == 204
    assert gateway.send("DELETE", f"webhook-endpoints/{endpoint['id']}").status_code == 404
    assert gateway.send("GET", "webhook-endpoints").json() == {"endpoints": []}


@pytest.mark.parametrize(
    "url",
    [
        "https://10.1.2.3/hooks",  # private
        "https://127.0.0.2/hooks",  # loopback, not an allowed host
        "https://localhost/hooks",  # resolves to loopback
        "https://[::1]/hooks",
        "https://169.254.169.254/latest/meta-data",  # link-local (cloud metadata)
        "http://93.184.216.34/hooks",  # public, but http
        "https://user:pw@127.0.0.1/hooks",  # credentials
        "ftp://127.0.0.1/hooks",
        "https://no-such-host.invalid/hooks",
        "https://example.com/a b",  # not a request line's
        "https://example.com/\u00e9",
    ],
)
def test_a_url_the_address_rules_refuse_is_422_and_nothing_is_made(gateway, url):
    response = register(gateway, url)

    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "webhook_url_invalid"
    assert not WebhookEndpoint.objects.exists()


@pytest.mark.parametrize(
    "body",
    [
        {"url": "https://example.com/h", "types": ["deposit.credited"], "secret": "mine"},
        {"url": "https://example.com/h", "types": []},
        {"url": "https://example.com/h", "types": ["deal.won"]},
        {"url": "https://example.com/h", "types": ["deal.settled", "deal.settled"]},
        {"url": "x" * 2001, "types": ["deal.settled"]},
        {"types": ["deal.settled"]},
    ],
)
def test_a_malformed_endpoint_is_400(gateway, body):
    response = gateway.post("webhook-endpoints", body)

    assert response.status_code == 400, response.text
    assert not WebhookEndpoint.objects.exists()


def test_a_receiver_answering_500_gets_the_event_again_within_10_s_signed(gateway, worker):
    with Receiver(500, 200) as receiver:
        endpoint = register(gateway, receiver.url).json()
        posted = time.monotonic()
        deposit = gateway.post(
            "players/hook-p1/deposits", {"amount": "140.00", "reference": f"dep-{uuid.uuid4()}"}
        )
        assert deposit.status_code == 201

        assert wait_until(lambda: len(receiver.received) >= 2, timeout=30)

    first, second = receiver.received[:2]
    assert second.at - first.at <= 10  # the first retry within 10 s
    assert first.at - posted <= 10
    assert first.body == second.body  # the same event again: receivers dedupe on its id
    event = json.loads(second.body)
    assert set(event) == {"id", "type", "created_at", "data"}
    assert (event["type"], event["data"]) == ("deposit.credited", deposit.json())
    assert second.headers["Rummy-Event-Id"] == str(event["id"])
    assert second.path == "/hooks/rummy"
    verified = snippet_verified()  # docs/events.md's check, as a receiver runs it
    for received in (first, second):
        assert verified(endpoint["secret"], received.body, received.headers["Rummy-Signature"])
    assert not verified("whsec_other", second.body, second.headers["Rummy-Signature"])
    assert wait_until(
        lambda: Delivery.objects.filter(status="delivered", attempts=2, last_status=200).exists()
    )


def test_only_the_types_asked_for_and_only_the_clients_own(gateway, live_server, worker):
    other = HttpApi(live_server.url, "payments", name="other-gateway")
    verified("hook-p2")
    won("hook-p2", "500.00")
    with Receiver(200) as mine, Receiver(200) as theirs:
        register(gateway, mine.url, ["withdrawal.requested"])
        register(other, theirs.url, TYPES)
        gateway.post("players/hook-p2/deposits", {"amount": "140.00", "reference": "d-1"})
        withdrawal = gateway.post(
            "players/hook-p2/withdrawals", {"amount": "100.00", "reference": "w-1"}
        )
        assert withdrawal.status_code == 201, withdrawal.text

        assert wait_until(lambda: len(mine.received) >= 1, timeout=30)
        time.sleep(1)

    assert [json.loads(r.body)["type"] for r in mine.received] == ["withdrawal.requested"]
    assert theirs.received == []
