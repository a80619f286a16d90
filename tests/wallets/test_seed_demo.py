import re
from base64 import b32decode
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django_otp.oath import TOTP
from rest_framework.test import APIClient

from rummy_ledger.api.models import ApiClient
from wallets.roles import roles_ensure

pytestmark = pytest.mark.django_db

STAFF = ["viewer", "operator", "approver", "approver2", "admin"]


def seed(capsys) -> tuple[str, dict[str, str]]:
    """Run seed_demo; its key and every staff user's password, as printed."""
    call_command("seed_demo", base_url="http://demo")
    return parse(capsys.readouterr().out)


def parse(note: str) -> tuple[str, dict[str, str]]:
    key = note.split("Api-Key ")[2].split("'")[0]  # the first is the "<key>" placeholder
    passwords = dict(re.findall(r"^    (\S+) +.*? (\S+)$", note, re.M))
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


def test_a_restart_keeps_the_key_and_the_passwords_and_writes_them_down(capsys, settings):
    first_key, first_passwords = seed(capsys)
    second_key, second_passwords = seed(capsys)

    assert list(ApiClient.objects.values_list("name", flat=True)) == ["demo"]
    assert second_key == first_key and wallet(first_key).status_code == 200
    assert second_passwords == first_passwords
    assert logs_in("viewer", first_passwords["viewer"])
    # what was printed is also on file, for whoever looks for it later
    assert parse(settings.DEMO_NOTE_FILE.read_text()) == (first_key, first_passwords)
    assert settings.DEMO_SECRETS_FILE.stat().st_mode & 0o077 == 0  # its owner's only


def test_each_demo_staff_user_has_an_authenticator_uri_that_passes_the_second_factor(
    capsys, settings
):
    seed(capsys)
    uris = authenticator_uris(settings.DEMO_NOTE_FILE.read_text())
    assert sorted(uris) == sorted(STAFF)
    seed(capsys)  # a restart keeps the secrets: the app they were added to keeps working
    assert authenticator_uris(settings.DEMO_NOTE_FILE.read_text()) == uris

    secret = parse_qs(urlsplit(uris["approver"]).query)["secret"][0]
    code = f"{TOTP(b32decode(secret + '=' * (-len(secret) % 8))).token():06d}"
    passwords = parse(settings.DEMO_NOTE_FILE.read_text())[1]
    client = Client()
    client.post("/admin/login/", {"username": "approver", "password": passwords["approver"]})
    assert client.get("/admin/")["Location"].startswith("/admin/second-factor/")
    passed = client.post("/admin/second-factor/", {"code": code, "next": "/admin/"})
    assert passed["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200


def authenticator_uris(note: str) -> dict[str, str]:
    return dict(re.findall(r"^      (\S+) +(otpauth://\S+)$", note, re.M))


def test_make_clean_gives_a_new_key_and_new_passwords(capsys, settings):
    first_key, first_passwords = seed(capsys)

    settings.DEMO_SECRETS_FILE.unlink()  # what `make clean` does with the rest of .data/
    second_key, second_passwords = seed(capsys)

    assert second_key != first_key
    assert wallet(first_key).status_code == 401  # the previous key stopped working
    assert wallet(second_key).status_code == 200
    assert not logs_in("viewer", first_passwords["viewer"])
    assert logs_in("viewer", second_passwords["viewer"])
