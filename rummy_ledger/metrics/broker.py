"""Celery's queue depth, read from the broker at a scrape (Redis or RabbitMQ alike)."""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client.core import GaugeMetricFamily, Metric

from rummy_ledger.celery import app


def queue_depth() -> Iterable[Metric]:
    """Messages waiting in the default queue, not yet taken by a worker (a worker's prefetched
    and running ones are not counted). A queue the broker has not seen yet holds none."""
    queue = app.conf.task_default_queue
    with app.connection_for_read() as conn:
        conn.ensure_connection(max_retries=0)  # one try: a probe, not a wait
        try:
            depth = conn.default_channel.queue_declare(queue=queue, passive=True).message_count
        except conn.channel_errors:
            depth = 0
    family = GaugeMetricFamily(
        "rummy_celery_queue_depth", "Celery messages waiting in the queue.", labels=["queue"]
    )
    family.add_metric([queue], depth)
    yield family
