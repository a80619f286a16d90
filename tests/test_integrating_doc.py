"""docs/integrating.md's Python runs as written, against a live server: a retry with the same
Idempotency-Key is answered as the first try, a 429 is waited out, the lists are read to the end,
a crashed gateway finds what it sent by reference, and the offsets its table of times states are
the offsets answers carry."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest

from rummy_ledger.api.models import ApiClient
from tests.builders import HttpApi, points_game
from wallets.models import Transfer

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]

DOC = Path(__file__).resolve().parents[1] / "docs" / "integrating.md"
PYTHON = re.compile(r"```python\n(.*?)```", re.DOTALL)


def doc_code(base_url: str) -> dict:
    """The doc's Python blocks, run in order in one namespace, with `BASE` the server's URL."""
    namespace = {"BASE": base_url}
    blocks = PYTHON.findall(DOC.read_text(encoding="utf-8"))
    assert len(blocks) >= 4
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
    return namespace


@pytest.fixture
def doc(live_server):
    return doc_code(live_server.url)


@pytest.fixture
def integrator(live_server):
    return HttpApi(live_server.url, "games", "payments", name="integrator")


def test_a_retry_with_the_same_key_is_answered_as_the_first_try(doc, integrator):
    body = {"amount": "500.00", "reference": "dep-1"}

    first = doc["post"](integrator.session, "players/asha/deposits", body, key="deposit-1")
    again = doc["post"](integrator.session, "players/asha/deposits", body, key="deposit-1")

    assert first.status_code == again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true" and again.content == first.content
    assert Transfer.objects.count() == 1


def test_a_429_is_waited_out(doc, integrator, rate_limits, settings):
    settings.API_RATE_BURST_SECONDS = 1
    ApiClient.objects.filter(pk=integrator.client.pk).update(rate_limit=1)

    answers = [
        doc["post"](
            integrator.session, "players/asha/deposits", {"amount": "10.00", "reference": r}
        )
        for r in ("a", "b", "c")
    ]

    assert [a.status_code for a in answers] == [201, 201, 201]


def test_a_crashed_game_server_and_gateway_find_what_they_sent(doc, integrator):
    points_game(integrator.client, "g-finished")  # one deal, settled: player a won
    points_game(integrator.client, "g-open", players=("e", "f", "g", "h"), settle=False)
    session = integrator.session
    kyc = {"pan": "ABCDE1234F", "status": "verified", "reference": "kyc-a"}
    assert session.post(f"{integrator.base_url}/api/v1/players/a/kyc", json=kyc).ok

    assert doc["withdrawal_sent"](session, "wd-1") is None  # never arrived: send it
    body = {"amount": "50.00", "reference": "wd-1"}
    sent = doc["post"](session, "players/a/withdrawals", body).json()

    assert doc["open_games"](session) == ["g-open"]
    found = doc["withdrawal_sent"](session, "wd-1")
    assert found["withdrawal_id"] == sent["withdrawal_id"] and found["status"] == sent["status"]


def test_the_offsets_of_the_table_of_times(doc, integrator):
    points_game(integrator.client, "g-1")
    base, session, instant = integrator.base_url, integrator.session, doc["instant"]
    session.post(f"{base}/api/v1/players/a/deposits", json={"amount": "10.00", "reference": "d"})
    for daily in ("100.00", "200.00"):  # the raise waits: it is pending, with its effective_at
        session.put(f"{base}/api/v1/players/a/limits", json={"daily": daily, "monthly": None})

    game = next(iter(doc["every"](session, "games", "games")))
    deal = session.get(f"{base}/api/v1/games/g-1").json()["deals"][0]
    tax = session.get(f"{base}/api/v1/players/a/tax/2026-27").json()
    limits = session.get(f"{base}/api/v1/players/a/limits").json()

    utc, ist = timedelta(0), timedelta(hours=5, minutes=30)
    assert instant(game["opened_at"]).utcoffset() == utc
    assert instant(game["closed_at"]).utcoffset() == utc
    assert instant(deal["settled_at"]).utcoffset() == utc
    assert instant(tax["start"]).utcoffset() == instant(tax["end"]).utcoffset() == ist
    assert instant(limits["pending"][0]["effective_at"]).utcoffset() == ist
