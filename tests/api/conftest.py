"""Fixtures for the hostile-input tests: a client holding both scopes that answers a crash with
the 500 response (as a real server would) instead of raising it into the test."""

from __future__ import annotations

import pytest
from django.db.models import Count, Sum

from tests.builders import make_api
from tournaments.models import Deal, Game
from wallets.models import Account, Entry, Player, Transfer


@pytest.fixture
def api(db):
    client = make_api("games", "payments", name="prober")[0]
    client.raise_request_exception = False
    return client


def ledger_state() -> tuple:
    """Everything a refused request must leave as it was."""
    return (
        Transfer.objects.count(),
        Entry.objects.aggregate(n=Count("id"), total=Sum("amount")),
        sorted(Account.objects.values_list("code", "balance")),
        Player.objects.count(),
        Game.objects.count(),
        Deal.objects.count(),
    )


def assert_envelope(response, status: int, code: str | None = None) -> dict:
    """The response is `status` with the JSON error envelope (and `code`, if given)."""
    assert response.status_code == status, (response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("application/json"), response["Content-Type"]
    error = response.json()["error"]
    assert set(error) == {"code", "message", "details"} and error["message"]
    if code is not None:
        assert error["code"] == code, error
    return error
