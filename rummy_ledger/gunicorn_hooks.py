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
    collector (rummy_ledger.heap), and, since it may replace one killed with settlement sends
    held by its publisher, it asks for the sweep that settles those within seconds
    (tournaments.tasks.sweep_after_lost_sends)."""
    from rummy_ledger.heap import freeze_startup_heap
    from tournaments.tasks import sweep_after_lost_sends

    sweep_after_lost_sends()
    freeze_startup_heap()
