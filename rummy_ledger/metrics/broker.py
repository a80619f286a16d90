"""The broker as a scrape reads it (Redis or RabbitMQ alike): whether it answers, and Celery's
queue depth. `/readyz` asks the same question (rummy_ledger/health.py)."""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client.core import GaugeMetricFamily, Metric

from rummy_ledger.celery import app


def broker_probe() -> Exception | None:
    """None when the broker answers one connection try (Redis: a PING; AMQP: a channel opened),
    else what the transport raised: one try, a probe, not a wait."""
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=0)
            conn.default_channel  # noqa: B018
        return None
    except Exception as exc:  # whatever the transport raises, the broker does not answer
        return exc


def broker_reading() -> Iterable[Metric]:
    """`rummy_broker_up`: 1 while the broker answers, 0 while it does not (deals are still
    stored and acknowledged then, and beat's wake gets them settled once it is back: the
    service is degraded, not down). While it answers, the messages waiting in the default queue,
    not yet taken by a worker (a worker's prefetched and running ones are not counted); a queue
    the broker has not seen yet holds none. One connection per scrape."""
    queue = app.conf.task_default_queue
    up = GaugeMetricFamily(
        "rummy_broker_up", "1 if the broker answered a connection at this scrape, 0 if not."
    )
    try:
        with app.connection_for_read() as conn:
            conn.ensure_connection(max_retries=0)  # one try: a probe, not a wait
            try:
                depth = conn.default_channel.queue_declare(queue=queue, passive=True).message_count
            except conn.channel_errors:
                depth = 0
    except Exception:  # whatever the transport raises, the broker does not answer
        up.add_metric([], 0)
        yield up
        return
    up.add_metric([], 1)
    yield up
    family = GaugeMetricFamily(
        "rummy_celery_queue_depth", "Celery messages waiting in the queue.", labels=["queue"]
    )
    family.add_metric([queue], depth)
    yield family
