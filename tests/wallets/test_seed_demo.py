import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command
from rest_framework.test import APIClient

from tests.finance.conftest import ensure_roles

pytestmark = pytest.mark.django_db


def test_seed_demo_prints_a_working_key_and_staff_who_can_log_in(capsys):
    ensure_roles()  # made by a data migration; transactional tests elsewhere flush them
    call_command("seed_demo", base_url="http://demo")
    out = capsys.readouterr().out
    key = out.split("Api-Key ")[1].split("'")[0]
    password = out.split("password for all: ")[1].split()[0]

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Api-Key {key}")
    wallet = api.get("/api/v1/players/demo-player-1/wallet").json()
    assert wallet["balances"]["deposit"]["amount"] == "1000.00"
    assert wallet["balances"]["chips"]["amount"] == "10000.00"

    operator = authenticate(username="operator", password=password)
    assert operator is not None and operator.is_staff and not operator.is_superuser
    assert list(operator.groups.values_list("name", flat=True)) == ["finance operator"]
    assert authenticate(username="admin", password=password).is_superuser
