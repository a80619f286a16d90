"""A deal's settlement is sent off the request's thread (rummy_ledger.publisher):
the request answers without waiting for the broker, and the send, made by the publisher thread,
still goes through AfterCommitTask's handling (a broker that refuses is logged, the sweep redoes
it: tests/ops/test_broker_outage.py). Real requests through the whole stack, a real closed port
for the broker."""

from __future__ import annotations

import gc
import logging
import time
from decimal import Decimal

import pytest
from celery.signals import worker_process_init, worker_ready

from rummy_ledger import gunicorn_hooks, publisher
from tests.builders import LOSER_22, WINNER, Server, funded_player, res, template
from tests.ops.test_broker_outage import broker_at, closed_port
from tests.tournaments.worker import Worker, private_queue, wait_until
from tournaments.models import Deal

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(60)]


def test_the_settlement_of_a_posted_deal_is_sent_by_the_publisher_thread(settings, caplog):
    settings.CELERY_PUBLISH_IN_BACKGROUND = True
    server = Server()
    template("points-1", "points", point_value=Decimal("1.00"))
    for p in ("a", "b"):
        funded_player(p, "100.00")
    assert server.open("g1", "points-1", ["a", "b"]).status_code == 201
    with broker_at(f"redis://127.0.0.1:{closed_port()}/0"), caplog.at_level(logging.WARNING):
        # when: a deal is posted while nothing answers at the broker's address
        response = server.deal("g1", 1, [res("a", "declared", WINNER), res("b", "lost", LOSER_22)])
        # then: it is acknowledged and stored at once
        assert response.status_code == 202, response.content
        assert Deal.objects.get().status == Deal.Status.STORED
        # and the send was made (and refused) on the publisher thread, not the request's
        deadline = time.monotonic() + 10
        while not caplog.records and time.monotonic() < deadline:
            time.sleep(0.05)
    [refused] = [r for r in caplog.records if "settle_deal not sent" in r.getMessage()]
    assert refused.threadName == "celery-publisher"


def test_deals_stored_close_together_are_sent_as_one_settle_deals(settings, caplog):
    """Within CELERY_PUBLISH_LINGER_SECONDS, the publisher merges single posts' `settle_deal`
    sends into one `settle_deals` message (one transaction for all of them in a worker)."""
    settings.CELERY_PUBLISH_IN_BACKGROUND = True
    settings.CELERY_PUBLISH_LINGER_SECONDS = 3  # far longer than three posts take
    server = Server()
    template("points-1", "points", point_value=Decimal("1.00"))
    for n in range(3):
        funded_player(f"a{n}", "100.00")
        funded_player(f"b{n}", "100.00")
        assert server.open(f"g{n}", "points-1", [f"a{n}", f"b{n}"]).status_code == 201
    with broker_at(f"redis://127.0.0.1:{closed_port()}/0"), caplog.at_level(logging.WARNING):
        for n in range(3):
            deal = [res(f"a{n}", "declared", WINNER), res(f"b{n}", "lost", LOSER_22)]
            assert server.deal(f"g{n}", 1, deal).status_code == 202
        deadline = time.monotonic() + 15
        while not caplog.records and time.monotonic() < deadline:
            time.sleep(0.05)
    sent = [r.getMessage() for r in caplog.records if "not sent" in r.getMessage()]
    assert len(sent) == 1 and "settle_deals not sent" in sent[0], sent


def test_the_publisher_merges_sends_of_one_key_in_the_order_queued():
    made: list = []

    def alone(name):
        return publisher.Send(alone=lambda: made.append(name))

    def keyed(item):
        return publisher.Send(
            alone=lambda: made.append(("one", item)),
            key="settle",
            item=item,
            together=lambda items: made.append(("together", items)),
        )

    for send in publisher.merged([alone("a"), keyed(1), alone("b"), keyed(2), keyed(3)]):
        send()
    assert made == ["a", ("together", [1, 2, 3]), "b"]
    made.clear()
    for send in publisher.merged([keyed(7), alone("c")]):
        send()
    assert made == [("one", 7), "c"]


def test_a_new_web_worker_gets_the_sends_a_killed_one_held_settled_within_seconds(settings):
    """A gunicorn worker killed while its publisher held sends lost them (the linger); its
    replacement's start (gunicorn's post_worker_init hook) asks for the sweep that settles them,
    a few seconds later, not at beat's next sweep (beat does not run here)."""
    settings.CELERY_PUBLISH_IN_BACKGROUND = True
    settings.CELERY_PUBLISH_LINGER_SECONDS = 0.2  # the sweep: deals older than 1.4 s, in 1.4 s
    server = Server()
    template("points-1", "points", point_value=Decimal("1.00"))
    for p in ("a", "b"):
        funded_player(p, "100.00")
    assert server.open("g1", "points-1", ["a", "b"]).status_code == 201
    with private_queue() as queue:
        # given: a stored deal whose settlement's send was lost (as with a killed process)
        with broker_at(f"redis://127.0.0.1:{closed_port()}/0"):
            deal = [res("a", "declared", WINNER), res("b", "lost", LOSER_22)]
            assert server.deal("g1", 1, deal).status_code == 202
            assert wait_until(lambda: publisher._unsent == 0, 10)  # the send failed
        worker = Worker(queue)
        try:
            # when: a web worker starts
            started = time.monotonic()
            gunicorn_hooks.post_worker_init(worker=None)
            # then: the deal is settled, by the sweep that start asked for, within seconds
            settled = wait_until(lambda: Deal.objects.get().status == Deal.Status.SETTLED, 30)
            elapsed = time.monotonic() - started
        finally:
            worker.stop()
    assert settled, "the deal whose send was lost was not settled"
    assert 1.4 <= elapsed < 10, elapsed


@pytest.mark.parametrize("start", ["gunicorn worker", "celery worker", "celery pool child"])
def test_a_worker_freezes_its_start_up_heap_once_loaded(settings, start):
    """A web worker that has loaded the application, and a Celery worker once ready (its pool's
    children once started), move their start-up heap out of the garbage collector's way
    (rummy_ledger.heap)."""
    settings.CELERY_PUBLISH_IN_BACKGROUND = True
    starts = {
        "gunicorn worker": lambda: gunicorn_hooks.post_worker_init(worker=None),
        "celery worker": lambda: worker_ready.send(sender=None),
        "celery pool child": lambda: worker_process_init.send(sender=None),
    }
    gc.unfreeze()
    try:
        with broker_at(f"redis://127.0.0.1:{closed_port()}/0"):  # the hook's sweep: not sent
            starts[start]()
            assert gc.get_freeze_count() > 10_000
            assert wait_until(lambda: publisher._unsent == 0, 10)
    finally:
        gc.unfreeze()
