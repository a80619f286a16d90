"""Every error under /api/ is the JSON envelope (docs/api.md), including those Django
raises before a view is found; outside /api/ (the admin) Django's own pages stay."""

import pytest
from django.test import Client

from tests.api.conftest import assert_envelope, ledger_state
from wallets import selectors

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/nope",
        "/api/nope",
        "/api/v2/templates",
        "/api/v1/templates/",  # a trailing slash
        "/api/v1/players/p1/wallet/",
        "/api/v1/games/g1/deals/",
        "/api/v1/players//wallet",
    ],
)
def test_unknown_routes_and_trailing_slashes_are_a_404_envelope(api, path):
    assert_envelope(api.get(path), 404, "not_found")
    assert_envelope(api.post(path, {}, format="json"), 404, "not_found")


def test_a_bad_host_header_is_a_400_envelope(api):
    error = assert_envelope(api.get("/api/v1/templates", HTTP_HOST="evil.example"), 400)
    assert error["code"] == "bad_request"
    assert "evil.example" not in error["message"]  # nothing reflected


@pytest.mark.parametrize("encoding", ["multipart", "form"])
def test_form_and_multipart_bodies_are_415_and_credit_nothing(api, encoding):
    body = {"amount": "5.00", "reference": "form"}
    if encoding == "form":
        response = api.post(
            "/api/v1/players/p1/deposits",
            "amount=5.00&reference=form",
            content_type="application/x-www-form-urlencoded",
        )
    else:
        response = api.post("/api/v1/players/p1/deposits", body)  # the test client's multipart
    assert_envelope(response, 415, "unsupported_media_type")
    assert ledger_state()[:2] == (0, {"n": 0, "total": None})


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/xml", "application/json-patch+json"]
)
def test_only_json_is_taken(api, content_type):
    response = api.generic("POST", "/api/v1/hands/evaluate", "{}", content_type=content_type)
    assert_envelope(response, 415, "unsupported_media_type")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("delete", "/api/v1/templates"),
        ("put", "/api/v1/players/p1/deposits"),
        ("get", "/api/v1/hands/evaluate"),
        ("patch", "/api/v1/games/g1"),
    ],
)
def test_a_wrong_method_is_a_405_envelope(api, method, path):
    assert_envelope(getattr(api, method)(path), 405, "method_not_allowed")


def test_a_crash_is_a_500_envelope_not_an_html_page(api, monkeypatch):
    def boom(**kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(selectors, "wallet_balances", boom)
    api.post("/api/v1/players/p1/deposits", {"amount": "1.00", "reference": "r"}, format="json")
    error = assert_envelope(api.get("/api/v1/players/p1/wallet"), 500, "server_error")
    assert "a bug" not in error["message"]


def test_outside_the_api_django_pages_stay():
    client = Client(raise_request_exception=False)
    missing = client.get("/nope")
    assert missing.status_code == 404 and missing["Content-Type"].startswith("text/html")
    bad_host = client.get("/admin/login/", HTTP_HOST="evil.example")
    assert bad_host.status_code == 400 and bad_host["Content-Type"].startswith("text/html")
