"""Celery sends off the request's thread (issue 23 §1): a web request that stored a deal does
not wait for the broker.

One daemon thread per process takes the sends from a queue and makes each on the process's
pooled broker connection (`AfterCommitTask._send`: a broker that refuses is logged). A send that
never happens (the process killed with sends still queued) is a lost message like any other:
the database holds the deal, and the settlement sweep re-sends it within
SETTLEMENT_SWEEP_SECONDS + SETTLEMENT_SWEEP_AGE_SECONDS. At a clean exit the queue is drained
for up to DRAIN_SECONDS. A forked child (a gunicorn worker) starts a thread of its own.
"""

from __future__ import annotations

import atexit
import logging
import os
import queue
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

DRAIN_SECONDS = 2.0
_sends: queue.SimpleQueue = queue.SimpleQueue()
_lock = threading.Lock()
_owner_pid: int | None = None


def submit(send: Callable[[], object]) -> None:
    """Make `send()` on the publisher thread, soon."""
    _ensure_thread()
    _sends.put(send)


def _ensure_thread() -> None:
    global _owner_pid, _sends
    if _owner_pid == os.getpid():
        return
    with _lock:
        if _owner_pid == os.getpid():
            return
        _sends = queue.SimpleQueue()  # a forked child does not inherit its parent's sends
        threading.Thread(target=_run, args=(_sends,), name="celery-publisher", daemon=True).start()
        _owner_pid = os.getpid()


def _run(sends: queue.SimpleQueue) -> None:
    while True:
        send = sends.get()
        try:
            send()
        except Exception:  # a bug in a send must not stop the ones after it
            log.exception("a background Celery send failed (a sweep will redo it)")


@atexit.register
def _drain() -> None:
    if _owner_pid != os.getpid():
        return
    deadline = time.monotonic() + DRAIN_SECONDS
    while not _sends.empty() and time.monotonic() < deadline:
        time.sleep(0.01)
