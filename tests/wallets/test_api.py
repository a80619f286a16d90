import hashlib

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from rummy_ledger.api.models import ApiClient
from tests.builders import make_api
from wallets.models import Entry, Player, Transfer

pytestmark = pytest.mark.django_db


def deposit(api, player="p1", amount="500.00", reference="gw-1"):
    return api.post(
        f"/api/v1/players/{player}/deposits",
        {"amount": amount, "reference": reference},
        format="json",
    )


def test_deposit_registers_the_player_and_credits_the_deposit_bucket_net_of_gst(payments_api):
    response = deposit(payments_api)
    assert response.status_code == 201
    body = response.json()
    assert (body["amount"], body["gst"], body["credited"]) == ("500.00", "142.86", "357.14")
    assert body["balances"]["deposit"] == {"amount": "357.14", "currency": "INR"}
    assert body["balances"]["chips"] == {"amount": "0.00", "currency": "CHP"}
    assert Player.objects.filter(external_id="p1").exists()


def test_repeated_deposit_reference_is_credited_once(payments_api):
    first = deposit(payments_api)
    again = deposit(payments_api)
    assert again.status_code == 200
    assert again.json()["transfer_id"] == first.json()["transfer_id"]
    assert again.json()["balances"]["deposit"]["amount"] == "357.14"


def test_same_reference_with_another_amount_is_a_conflict(payments_api):
    deposit(payments_api)
    response = deposit(payments_api, amount="600.00")
    assert response.status_code == 409
    # `idempotency_conflict` is the Idempotency-Key header's; a reference has its own code
    assert response.json()["error"]["code"] == "reference_conflict"
    assert Transfer.objects.count() == 1


@pytest.mark.parametrize(
    ("amount", "reason"),
    [
        (500.5, "decimal strings"),
        ("-5.00", "greater than zero"),
        ("0", "greater than zero"),
        ("1.001", "two decimal places"),
        ("lots", "not a decimal"),
        (None, "null"),
    ],
)
def test_bad_amounts_get_400_naming_the_field_and_nothing_is_written(payments_api, amount, reason):
    response = deposit(payments_api, amount=amount)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert reason in error["details"]["amount"][0]
    assert not Player.objects.exists() and not Entry.objects.exists()


def test_missing_reference_is_400(payments_api):
    response = payments_api.post("/api/v1/players/p1/deposits", {"amount": "1.00"}, format="json")
    assert response.status_code == 400
    assert "reference" in response.json()["error"]["details"]


def test_wallet_of_unknown_player_is_404(games_api):
    response = games_api.get("/api/v1/players/nobody/wallet")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "unknown_player"


def test_wallet_shows_balances_by_bucket(payments_api, games_api):
    deposit(payments_api, amount="280.00")
    response = games_api.get("/api/v1/players/p1/wallet")
    assert response.status_code == 200
    assert response.json()["balances"]["deposit"]["amount"] == "200.00"
    assert set(response.json()["balances"]) == {
        "deposit",
        "winnings",
        "bonus",
        "chips",
        "pending",
    }


def test_games_scope_cannot_deposit(games_api):
    response = deposit(games_api)
    assert response.status_code == 403
    assert not Transfer.objects.exists()


@pytest.mark.parametrize(
    "header", [None, "Api-Key nope", "Bearer abc", "Api-Key rl_000000000000_wrong"]
)
def test_missing_or_bad_key_is_401(db, header):
    api = APIClient()
    if header:
        api.credentials(HTTP_AUTHORIZATION=header)
    response = api.get("/api/v1/players/p1/wallet")
    assert response.status_code == 401
    assert "error" in response.json()


def test_revoked_key_is_refused(db):
    api, client = make_api("games")
    client.is_active = False
    client.save()
    assert api.get("/api/v1/players/p1/wallet").status_code == 401


def test_create_api_client_prints_a_working_key_last(db, capsys):
    call_command("create_api_client", "table-7", "--scope", "games", "--scope", "payments")
    key = capsys.readouterr().out.strip().splitlines()[-1]
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Api-Key {key}")
    assert deposit(api).status_code == 201
    stored = ApiClient.objects.get(name="table-7")
    assert key not in str(ApiClient.objects.values_list())  # stored hashed only
    assert stored.key_hash == hashlib.sha256(key.encode()).hexdigest()


def test_openapi_schema_and_docs_are_served(client):
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    assert b"/api/v1/players/{player_id}/deposits" in schema.content
    assert client.get("/api/docs/").status_code == 200


def test_deposit_with_an_idempotency_key_replays_the_first_answer(payments_api):
    def post(amount: str, reference: str):
        return payments_api.post(
            "/api/v1/players/p1/deposits",
            {"amount": amount, "reference": reference},
            format="json",
            HTTP_IDEMPOTENCY_KEY="dep-1",
        )

    first = post("500.00", "gw-1")
    again = post("500.00", "gw-1")
    assert first.status_code == again.status_code == 201  # the first answer, replayed
    assert again.json() == first.json() and again["Idempotent-Replayed"] == "true"
    other = post("600.00", "gw-2")  # the same key for another deposit
    assert other.status_code == 409 and other.json()["error"]["code"] == "idempotency_conflict"
    assert Transfer.objects.filter(kind="deposit").count() == 1
