"""A broker outage: a deal that was stored is acknowledged (202) whatever the broker does, and
the beat sweep settles it once the broker is back. Real HTTP requests through the whole stack
(the test client), a real closed port for the broker, a real Celery worker afterwards."""

from __future__ import annotations

import logging
import os
import socket
from contextlib import contextmanager
from decimal import Decimal

import pytest

from rummy_ledger.celery import app as celery_app
from tests.builders import LOSER_22, WINNER, Server, books_balance_for, funded_player, res, template
from tests.tournaments.worker import Worker, private_queue, wait_until
from tournaments.models import Deal, Game
from tournaments.tasks import sweep_unsettled

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]


def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _reset_connections() -> None:
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


@contextmanager
def broker_at(url: str):
    """Celery sends to `url` meanwhile (its cached connection pools are dropped both ways).

    Celery reads the CELERY_BROKER_URL environment variable before its configuration (as under
    `make test-services`), so that is moved too."""
    previous, previous_env = celery_app.conf.broker_url, os.environ.get("CELERY_BROKER_URL")
    celery_app.conf.broker_url = url
    if previous_env is not None:
        os.environ["CELERY_BROKER_URL"] = url
    _reset_connections()
    try:
        yield
    finally:
        celery_app.conf.broker_url = previous
        if previous_env is not None:
            os.environ["CELERY_BROKER_URL"] = previous_env
        _reset_connections()


def test_a_deal_posted_while_the_broker_is_down_is_acknowledged_and_the_sweep_settles_it(caplog):
    server = Server()
    template("points-1", "points", point_value=Decimal("1.00"))
    for p in ("a", "b"):
        funded_player(p, "100.00")
    assert server.open("g1", "points-1", ["a", "b"]).status_code == 201
    deal = [res("a", "declared", WINNER), res("b", "lost", LOSER_22)]
    with private_queue() as queue:
        # when: the deal is posted while nothing answers at the broker's address
        with broker_at(f"redis://127.0.0.1:{closed_port()}/0"), caplog.at_level(logging.WARNING):
            response = server.deal("g1", 1, deal, key="deal-1")
        # then: it is acknowledged, stored, and the failed send is logged, not raised
        assert response.status_code == 202, response.content
        assert response.json() == {"game_id": "g1", "deal_no": 1, "status": "stored"}
        assert Deal.objects.get().status == Deal.Status.STORED
        assert "broker unavailable, tournaments.tasks.settle_deal not sent" in caplog.text
        # and a repeat of the request replays the acknowledgement (nothing is posted twice)
        again = server.deal("g1", 1, deal, key="deal-1")
        assert again.status_code == 202 and again["Idempotent-Replayed"] == "true"

        # when: the broker is back and the sweep runs (beat's schedule; here by hand)
        worker = Worker(queue)
        try:
            sweep_unsettled.delay(older_than_seconds=0)
            # then: a real worker settles it, once
            settled = wait_until(lambda: Deal.objects.get().status == Deal.Status.SETTLED, 60)
        finally:
            worker.stop()
    assert settled, "the sweep did not get the stored deal settled"
    game = Game.objects.get()
    assert game.status == Game.Status.FINISHED
    books_balance_for(game)
