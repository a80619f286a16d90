"""API keys over real HTTP: a client rotates its key (both work, then only the new one), a key
past its end answers 401 `invalid_key`, a key used from outside its client's networks answers
403 `network_refused` (kept for the admin), and each key's last use is written at most once a
minute. The admin rotates a key (shown once) and the change is in the staff audit list."""

from __future__ import annotations

from datetime import timedelta

import pytest
import requests
from django.urls import reverse
from django.utils import timezone

from rummy_ledger.api.keys import api_client_create, api_key_rotate
from rummy_ledger.api.models import ApiClient
from rummy_ledger.staff.models import AuditEvent, AuditKind
from tests.builders import staff, staff_client

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def call(live_server):
    def get(key: str) -> requests.Response:
        return requests.get(
            f"{live_server.url}/api/v1/templates",
            headers={"Authorization": f"Api-Key {key}"},
            timeout=10,
        )

    return get


def code(response: requests.Response) -> tuple[int, str | None]:
    body = response.json()
    return response.status_code, body.get("error", {}).get("code") if isinstance(
        body, dict
    ) else None


def test_both_keys_work_while_rotating_then_only_the_new_one(call):
    client, old = api_client_create(name="lobby", scopes=["games"])
    assert call(old).status_code == 200
    new = api_key_rotate(client, overlap=timedelta(hours=1))
    assert call(old).status_code == 200 and call(new).status_code == 200

    client.refresh_from_db()
    client.previous_key_ends_at = timezone.now() - timedelta(seconds=1)
    client.save(update_fields=["previous_key_ends_at"])
    assert code(call(old)) == (401, "invalid_key")
    assert call(new).status_code == 200

    api_key_rotate(client, overlap=timedelta(hours=1))  # the key rotated out before: forgotten
    assert code(call(old)) == (401, "authentication_failed")


def test_an_expired_key_answers_invalid_key(call):
    client, key = api_client_create(name="lobby", scopes=["games"])
    ApiClient.objects.filter(pk=client.pk).update(
        key_expires_at=timezone.now() + timedelta(hours=1)
    )
    assert call(key).status_code == 200
    client.refresh_from_db()
    client.key_expires_at = timezone.now() - timedelta(seconds=1)
    client.save(update_fields=["key_expires_at"])
    assert code(call(key)) == (401, "invalid_key")


def test_each_keys_last_use_is_written_at_most_once_a_minute(call):
    client, old = api_client_create(name="lobby", scopes=["games"])
    call(old)
    first = ApiClient.objects.get(pk=client.pk).key_used_at
    assert first is not None and timezone.now() - first < timedelta(seconds=10)
    call(old)
    assert ApiClient.objects.get(pk=client.pk).key_used_at == first
    new = api_key_rotate(client, overlap=timedelta(hours=1))
    call(new)
    rotated = ApiClient.objects.get(pk=client.pk)
    assert rotated.previous_key_used_at == first and rotated.key_used_at > first


def test_a_key_works_only_from_its_clients_networks(call):
    client, key = api_client_create(name="gw", scopes=["games"])
    client.allowed_networks = ["10.9.0.0/16", "2001:db8::/32"]
    client.save(update_fields=["allowed_networks"])
    assert code(call(key)) == (403, "network_refused")
    refused = ApiClient.objects.get(pk=client.pk)
    assert refused.refused_address == "127.0.0.1" and refused.refused_at is not None

    client.allowed_networks = ["127.0.0.0/8"]
    client.save(update_fields=["allowed_networks"])
    assert call(key).status_code == 200


def test_a_superuser_rotates_a_key_in_admin_and_it_is_audited(call):
    client, old = api_client_create(name="lobby", scopes=["games"])
    root = staff_client(staff("root", superuser=True))
    page = root.post(
        reverse("admin:api_apiclient_changelist"),
        {"action": "key_rotate_action", "_selected_action": [client.pk]},
    )
    assert page.status_code == 200
    new = page.content.decode().split('<code id="api-key">')[1].split("<")[0]
    assert call(new).status_code == 200 and call(old).status_code == 200
    rotated = AuditEvent.objects.get(kind=AuditKind.KEY_CHANGE)
    assert rotated.actor == "root" and rotated.detail.startswith("rotated: new key ")
    listing = root.get(reverse("admin:api_apiclient_changelist")).content.decode()
    assert new not in listing  # shown once

    refused = root.post(
        reverse("admin:api_apiclient_change", args=[client.pk]),
        {"is_active": "on", "allowed_networks": '["10.0.0.1/8"]', "rate_limit": ""},
    )
    assert refused.status_code == 200 and "not a network" in refused.content.decode()
    assert ApiClient.objects.get(pk=client.pk).allowed_networks == []
