"""gunicorn's configuration hooks under `serve` (`--config python:rummy_ledger.gunicorn_hooks`).
Loaded by gunicorn's master before Django is set up: it imports nothing of Django at the top
(a worker's hook runs after the worker has loaded the application, Django set up)."""

from prometheus_client import multiprocess


def child_exit(server, worker) -> None:
    """A dead worker's live gauges leave the sum of every process's metrics (its counters
    stay: what it counted happened)."""
    multiprocess.mark_process_dead(worker.pid)


def post_worker_init(worker) -> None:
    """A worker that has loaded the application: its start-up heap is frozen out of the garbage
    collector (rummy_ledger.heap)."""
    from rummy_ledger.heap import freeze_startup_heap

    freeze_startup_heap()
