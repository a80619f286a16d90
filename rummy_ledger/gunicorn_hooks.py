"""gunicorn's configuration hooks under `serve` (`--config python:rummy_ledger.gunicorn_hooks`).
Loaded by gunicorn's master before Django is set up: it imports nothing of Django."""

from prometheus_client import multiprocess


def child_exit(server, worker) -> None:
    """A dead worker's live gauges leave the sum of every process's metrics (its counters
    stay: what it counted happened)."""
    multiprocess.mark_process_dead(worker.pid)
