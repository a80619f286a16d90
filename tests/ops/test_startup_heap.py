"""A worker's start-up heap is frozen out of the garbage collector once it has loaded the
application (rummy_ledger.heap): a gunicorn worker by its hook (rummy_ledger.gunicorn_hooks), a
Celery worker once ready and each of its pool's children once started (rummy_ledger.celery)."""

from __future__ import annotations

import gc

import pytest
from celery.signals import worker_process_init, worker_ready

from rummy_ledger import gunicorn_hooks


@pytest.mark.parametrize("start", ["gunicorn worker", "celery worker", "celery pool child"])
def test_a_worker_freezes_its_start_up_heap_once_loaded(start):
    """A web worker that has loaded the application, and a Celery worker once ready (its pool's
    children once started), move their start-up heap out of the garbage collector's way
    (rummy_ledger.heap)."""
    starts = {
        "gunicorn worker": lambda: gunicorn_hooks.post_worker_init(worker=None),
        "celery worker": lambda: worker_ready.send(sender=None),
        "celery pool child": lambda: worker_process_init.send(sender=None),
    }
    gc.unfreeze()
    try:
        starts[start]()
        assert gc.get_freeze_count() > 10_000
    finally:
        gc.unfreeze()
