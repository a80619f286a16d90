"""Prometheus metrics: what an operator watches (docs/operations.md, "Metrics").

Two kinds:
- **events**, counted where they happen (prometheus-client counters and histograms): requests
  and their latency per route (`http.py`), deals stored and settled and the settlement lag
  (`tournaments.metrics`). Under `serve` every process (gunicorn workers, Celery workers) writes
  them to files under `PROMETHEUS_MULTIPROC_DIR` and the web sums them at a scrape.
- **readings**, taken from the database or the broker at a scrape (unsettled deals and the oldest
  one's age, withdrawals waiting, the last reconciliation, Celery's queue): each app registers
  its own as `readings` (`rummy_ledger/plugins.py`) from `AppConfig.ready()`, as it registers its
  reconciliation checks, so this package names no app's tables.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from prometheus_client.core import GaugeMetricFamily, Metric

log = logging.getLogger(__name__)

# prometheus-client's multiprocess mode: set (by `serve`) for every process of a run
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
Reading = Callable[[], Iterable[Metric]]
_READINGS: dict[str, Reading] = {}


def reading_register(name: str, reading: Reading) -> None:
    """`reading()` yields metric families; it runs at every scrape, so it must be cheap."""
    _READINGS[name] = reading


class Readings:
    """A prometheus-client collector over the registered readings. A reading that fails (its
    database or broker not answering) is left out and says so in `rummy_metrics_reading_up`."""

    def describe(self) -> list:
        return []  # nothing is read at registration

    def collect(self) -> Iterable[Metric]:
        up = GaugeMetricFamily(
            "rummy_metrics_reading_up",
            "1 if the reading answered at this scrape, 0 if it failed (its figures are missing).",
            labels=["reading"],
        )
        for name, reading in _READINGS.items():
            try:
                families = list(reading())
            except Exception as exc:  # an operator's scrape must not fail with one source
                log.warning("metrics reading %s failed: %s", name, exc)
                up.add_metric([name], 0)
                continue
            up.add_metric([name], 1)
            yield from families
        yield up
