"""Finance admin against abuse: API keys and their hashes stay secret, login
is throttled, report date ranges are bounded."""

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from rummy_ledger.api.keys import api_client_create
from rummy_ledger.api.models import ApiClient
from tests.builders import funded_player, staff, staff_client
from wallets.models import Player
from wallets.roles import APPROVER, VIEWER

pytestmark = pytest.mark.django_db


# --- API keys ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query", ["key_hash__startswith={}", "key_hash={}", "key_hash__gt={}", "key_hash__regex=^{}"]
)
def test_no_one_can_filter_api_clients_by_key_hash(query):
    client, _key = api_client_create(name="gateway", scopes=["payments"])
    url = reverse("admin:api_apiclient_changelist")
    for user in (staff("viewer", VIEWER), staff("root", superuser=True)):
        response = staff_client(user, raise_request_exception=False).get(
            f"{url}?{query.format(client.key_hash[:1])}"
        )
        assert response.status_code == 400, (user, response.status_code)
        assert client.key_hash.encode() not in response.content


def test_the_list_filter_still_works():
    api_client_create(name="gateway", scopes=["payments"])
    url = reverse("admin:api_apiclient_changelist")
    response = staff_client(staff("viewer", VIEWER), raise_request_exception=False).get(
        f"{url}?is_active__exact=1"
    )
    assert response.status_code == 200 and b"gateway" in response.content


def test_a_new_key_is_shown_on_the_answer_itself_and_never_in_a_cookie():
    admin = staff_client(staff("root", superuser=True), raise_request_exception=False)
    response = admin.post(
        reverse("admin:api_apiclient_add"), {"name": "table-9", "scopes": ["games"]}
    )

    assert response.status_code == 200  # the page itself, not a redirect carrying a message
    assert "no-store" in response["Cache-Control"]
    key = response.context["key"]
    assert key.startswith("rl_") and key in response.content.decode()
    assert all(key not in morsel.value for morsel in response.cookies.values())
    assert all(key not in morsel.value for morsel in admin.cookies.values())
    stored = ApiClient.objects.get(name="table-9")
    assert key not in str(list(ApiClient.objects.values_list()))
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Api-Key {key}")
    assert api.get("/api/v1/templates").status_code == 200
    # the next page shows no key
    page = admin.get(reverse("admin:api_apiclient_change", args=[stored.pk]))
    assert key not in page.content.decode()


# --- login throttling (django-axes) -------------------------------------------------------------


def attempt(username: str, password: str, address: str = "10.0.0.1") -> int:
    response = Client(REMOTE_ADDR=address).post(
        "/admin/login/?next=/admin/", {"username": username, "password": password}
    )
    return response.status_code


@pytest.fixture
def approver(db):
    user = staff("approver", APPROVER)
    user.set_password("the-right-one-42")
    user.save()
    return user


def test_five_wrong_passwords_lock_the_username_out(approver):
    for _ in range(4):
        assert attempt("approver", "wrong") == 200  # the login form again, with an error
    assert attempt("approver", "wrong") == 429  # the fifth locks it
    assert attempt("approver", "the-right-one-42") == 429  # locked: the right one fails too
    assert attempt("approver", "the-right-one-42", address="10.9.9.9") == 429  # from anywhere


def test_a_few_typos_do_not_lock_anyone_out(approver):
    for _ in range(4):
        attempt("approver", "wrong")
    assert attempt("approver", "the-right-one-42") == 302
    for _ in range(4):  # a success starts the count again
        attempt("approver", "wrong")
    assert attempt("approver", "the-right-one-42") == 302


def test_one_address_guessing_many_usernames_is_locked_out(approver):
    for n in range(5):
        attempt(f"someone-{n}", "guess", address="10.6.6.6")
    assert attempt("approver", "the-right-one-42", address="10.6.6.6") == 429
    assert attempt("approver", "the-right-one-42", address="10.0.0.2") == 302


def test_the_lockout_ends_after_the_cool_off(approver, settings):
    from datetime import timedelta

    from axes.models import AccessAttempt

    for _ in range(5):
        attempt("approver", "wrong")
    assert attempt("approver", "the-right-one-42") == 429
    AccessAttempt.objects.update(
        attempt_time=AccessAttempt.objects.get().attempt_time - timedelta(minutes=16)
    )
    assert attempt("approver", "the-right-one-42") == 302


# --- bounded date ranges ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "end"),
    [("2026-01-01", "9999-12-31"), ("0001-01-01", "2026-01-01"), ("1999-12-31", "2000-01-02")],
)
def test_reports_with_dates_out_of_range_are_a_form_error(start, end):
    funded_player("alice", "10.00")
    viewer = staff_client(staff("viewer", VIEWER), raise_request_exception=False)
    player = Player.objects.get(external_id="alice")
    pages = [
        reverse("admin:tournaments_game_fee_report"),
        reverse("admin:wallets_player_statement", args=[player.pk]),
    ]
    for page in pages:
        for fmt in ("", "csv"):
            response = viewer.get(page, {"start": start, "end": end, "format": fmt})
            assert response.status_code == 200, (page, fmt, response.status_code)
            assert response["Content-Type"].startswith("text/html")
            assert b"errorlist" in response.content
