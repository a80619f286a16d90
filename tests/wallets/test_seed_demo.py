import re

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

from wallets.models import ApiClient
from wallets.roles import roles_ensure

pytestmark = pytest.mark.django_db

STAFF = ["viewer", "operator", "approver", "approver2", "admin"]


def seed(capsys) -> tuple[str, dict[str, str]]:
    """Run seed_demo; its key and every staff user's password, as printed."""
    call_command("seed_demo", base_url="http://demo")
    out = capsys.readouterr().out
    key = out.split("Api-Key ")[1].split("'")[0]
    passwords = dict(re.findall(r"^  (\S+) +.*? (\S+)$", out, re.M))
    return key, passwords


def wallet(key: str):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Api-Key {key}")
    return api.get("/api/v1/players/demo-player-1/wallet")


def logs_in(username: str, password: str) -> bool:
    response = Client().post("/admin/login/", {"username": username, "password": password})
    return response.status_code == 302


def test_seed_demo_prints_a_working_key_and_staff_each_with_their_own_password(capsys):
    roles_ensure()  # the one roles service (also run by seed_demo itself)
    key, passwords = seed(capsys)

    body = wallet(key).json()
    assert body["balances"]["deposit"]["amount"] == "714.29"  # 1,000.00 less 40/140 GST
    assert body["balances"]["chips"]["amount"] == "10000.00"

    assert sorted(passwords) == sorted(STAFF)
    assert len(set(passwords.values())) == len(STAFF)  # one each, not one shared
    for username in STAFF:
        assert logs_in(username, passwords[username]), username
    assert not logs_in("admin", passwords["operator"])  # a role's password opens no other user
    operator = User.objects.get(username="operator")
    assert operator.is_staff and not operator.is_superuser
    assert list(operator.groups.values_list("name", flat=True)) == ["finance operator"]
    assert User.objects.get(username="admin").is_superuser


def test_every_start_reuses_the_demo_client_and_revokes_its_previous_key(capsys):
    first_key, first_passwords = seed(capsys)
    second_key, second_passwords = seed(capsys)

    assert list(ApiClient.objects.values_list("name", flat=True)) == ["demo"]
    assert wallet(first_key).status_code == 401  # the previous start's key stopped working
    assert wallet(second_key).status_code == 200
    assert not logs_in("viewer", first_passwords["viewer"])
    assert logs_in("viewer", second_passwords["viewer"])
