"""Prometheus metrics as an operator scrapes them: a small load over real HTTP (the live
server), then `/metrics` shows the requests, deals and settlements it caused. (Multiprocess mode
under gunicorn is scraped in tests/ops/test_serve.py.)"""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
import requests

from tests.builders import LOSER_22, WINNER, HttpApi, funded_player, res, template
from tests.tournaments.worker import private_queue
from tournaments.games.services.settlement import waiting_settle
from wallets.reconciliation.runner import reconcile_run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(60)]
TOKEN = "metrics-test-token"


def scrape(base_url: str) -> dict[str, float]:
    response = requests.get(f"{base_url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200, response.text
    return parse(response.text)


def parse(text: str) -> dict[str, float]:
    """Prometheus's text format: each series (name and labels) to its value."""
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
    return samples


def sample(samples: dict[str, float], name: str, **labels: str) -> float:
    """The value of one series (0 if absent), its labels in any order."""
    for key, value in samples.items():
        match = re.fullmatch(r"([^{]+)(?:\{(.*)\})?", key)
        found = dict(re.findall(r'(\w+)="([^"]*)"', match.group(2) or ""))
        if match.group(1) == name and found == labels:
            return value
    return 0.0


def test_a_scrape_after_a_small_load_shows_the_counts_it_caused(live_server, settings):
    settings.METRICS_TOKEN = TOKEN
    # the two deals' wakes gathered into one message (due at the next full hour: not run here)
    settings.SETTLEMENT_GATHER_SECONDS = 3600
    base = live_server.url
    template("points-1", "points", point_value=Decimal("1.00"))
    for p in ("a", "b", "c", "d"):
        funded_player(p, "100.00")
    server = HttpApi(base, "games", name="game-server-1")
    with private_queue() as queue:
        before = scrape(base)
        # when: two games opened and their deals posted over HTTP
        for game, (x, y) in (("g1", ("a", "b")), ("g2", ("c", "d"))):
            assert server.post("games", {"game_id": game, "template": "points-1",
                                         "players": [x, y]}).status_code == 201  # fmt: skip
            deal = {"deal_no": 1, "wild_joker": "KD",
                    "results": [res(x, "declared", WINNER), res(y, "lost", LOSER_22)]}  # fmt: skip
            assert server.post(f"games/{game}/deals", deal).status_code == 202
        stored = scrape(base)

        # then: the requests by route (not path), the deals stored, waiting, and in the queue
        def delta(name, **labels):
            return sample(stored, name, **labels) - sample(before, name, **labels)

        latency = "rummy_http_request_duration_seconds_count"
        assert delta(latency, route="game-deals", method="POST", status="202") == 2
        assert delta(latency, route="games", method="POST", status="201") == 2
        assert delta("rummy_deals_stored_total") == 2
        assert sample(stored, "rummy_deals_unsettled") == 2
        assert sample(stored, "rummy_deals_unsettled_oldest_seconds") > 0
        assert sample(stored, "rummy_celery_queue_depth", queue=queue) == 1
        assert sample(stored, "rummy_withdrawals_waiting", status="requested") == 0
        assert sample(stored, "rummy_metrics_reading_up", reading="celery") == 1

    # when: the deals are settled (the Celery task's body, here) and a reconciliation runs
    waiting_settle()
    reconcile_run(trigger="command")
    settled = scrape(base)
    # then
    assert (
        sample(settled, "rummy_deals_settled_total") - sample(stored, "rummy_deals_settled_total")
        == 2
    )
    lag = "rummy_settlement_lag_seconds_count"
    assert sample(settled, lag) - sample(stored, lag) == 2
    assert sample(settled, "rummy_deals_unsettled") == 0
    assert sample(settled, "rummy_deals_unsettled_oldest_seconds") == 0
    assert sample(settled, "rummy_reconciliation_last_result", status="clean") == 1
    assert sample(settled, "rummy_reconciliation_last_discrepancies") == 0


def test_metrics_need_the_bearer_token_and_are_off_without_one(live_server, settings):
    url = f"{live_server.url}/metrics"
    settings.METRICS_TOKEN = ""
    assert requests.get(url, headers={"Authorization": "Bearer "}).status_code == 404
    settings.METRICS_TOKEN = TOKEN
    assert requests.get(url).status_code == 401
    wrong = requests.get(url, headers={"Authorization": f"Bearer {TOKEN}x"})
    assert wrong.status_code == 401 and wrong.headers["WWW-Authenticate"].startswith("Bearer")
    assert "rummy_deals_stored_total" not in wrong.text
