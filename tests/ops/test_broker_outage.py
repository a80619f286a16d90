"""A broker outage: a deal that was stored is acknowledged (202) whatever the broker does, within
half a second more when the broker hangs, and beat's wake settles it once the broker is back.
Real HTTP requests through the whole stack (the test client), a real closed port or a real
socket that never answers for the broker, a real Celery worker afterwards."""

from __future__ import annotations

import logging
import os
import socket
import time
from contextlib import contextmanager
from decimal import Decimal

import pytest
from django.conf import settings

from rummy_ledger.celery import app as celery_app
from tests.builders import LOSER_22, WINNER, Server, books_balance_for, funded_player, res, template
from tests.tournaments.worker import Worker, private_queue, wait_until
from tournaments.models import Deal, Game
from tournaments.tasks import settle_waiting

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]


def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def override(conf, **values):
    """Celery's configuration `values` meanwhile."""
    previous = {name: conf[name] for name in values}
    conf.update(values)
    try:
        yield
    finally:
        conf.update(previous)


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


def test_a_deal_posted_while_the_broker_is_down_is_acknowledged_and_beats_wake_settles_it(caplog):
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
        assert "broker unavailable, tournaments.tasks.settle_waiting not sent" in caplog.text
        # and a repeat of the request replays the acknowledgement (nothing is posted twice)
        again = server.deal("g1", 1, deal, key="deal-1")
        assert again.status_code == 202 and again["Idempotent-Replayed"] == "true"

        # when: the broker is back and beat's wake comes (every SETTLEMENT_WAKE_SECONDS; by hand)
        worker = Worker(queue)
        try:
            settle_waiting.delay()
            # then: a real worker settles it, once
            settled = wait_until(lambda: Deal.objects.get().status == Deal.Status.SETTLED, 60)
        finally:
            worker.stop()
    assert settled, "beat's wake did not get the stored deal settled"
    game = Game.objects.get()
    assert game.status == Game.Status.FINISHED
    books_balance_for(game)


@contextmanager
def hung_broker():
    """The URL of a broker that hangs (a frozen process, a dead link): its port takes the
    connection (the kernel's backlog) and then never answers a byte."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield f"redis://127.0.0.1:{sock.getsockname()[1]}/0"


def test_a_hung_broker_holds_a_deal_post_for_half_a_second_at_most(caplog):
    server = Server()
    template("points-1", "points", point_value=Decimal("1.00"))
    for p in ("a", "b", "c", "d"):
        funded_player(p, "100.00")
    for game_id, players in (("g1", ["a", "b"]), ("g2", ["c", "d"])):
        assert server.open(game_id, "points-1", players).status_code == 201
    # a Redis URL: Celery sends with the options settings give a Redis broker, whatever broker
    # this run was configured with (RabbitMQ under make test-services)
    options = {**celery_app.conf.broker_transport_options, **settings.REDIS_BROKER_SOCKET_TIMEOUTS}
    with (
        private_queue(),
        hung_broker() as url,
        broker_at(url),
        override(celery_app.conf, broker_transport_options=options),
    ):
        took = []
        for game_id, (winner, loser) in (("g1", "ab"), ("g2", "cd")):
            deal = [res(winner, "declared", WINNER), res(loser, "lost", LOSER_22)]
            began = time.monotonic()
            with caplog.at_level(logging.WARNING):
                response = server.deal(game_id, 1, deal)
            took.append(time.monotonic() - began)
            assert response.status_code == 202, response.content
    # the first wake fails after the broker's socket timeout (0.5 s), once, without a retry; the
    # next post sends none (held back until beat's next wake), so it does not wait at all
    assert took[0] < 1.5 and took[1] < 0.4, took
    assert caplog.text.count("broker unavailable, tournaments.tasks.settle_waiting not sent") == 1
    assert Deal.objects.filter(status=Deal.Status.STORED).count() == 2
