"""Celery sends off the request's thread: a web request that stored a deal does
not wait for the broker, and the settlement of deals stored close together goes in one message.

One daemon thread per process takes the sends from a queue and makes each on the process's
pooled broker connection (`AfterCommitTask._send`: a broker that refuses is logged). Sends that
name a way to go together (`Send.together`: a deal's `settle_deal` goes as `settle_deals`) wait
up to CELERY_PUBLISH_LINGER_SECONDS for others and leave as one message: a worker then settles
them in one transaction instead of one each (the same lag bound: the linger is well inside it).
A send that never happens (the process killed with sends still queued) is a lost message like
any other: the database holds the deal, and the settlement sweep re-sends it within
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
from dataclasses import dataclass
from typing import Any

from django.conf import settings

log = logging.getLogger(__name__)

DRAIN_SECONDS = 2.0
MOST_TOGETHER = 100  # sends merged into one message at most
_sends: queue.SimpleQueue = queue.SimpleQueue()
_lock = threading.Lock()
_owner_pid: int | None = None
_unsent = 0  # submitted and not yet sent (queued, or held by the linger): the drain waits for 0


@dataclass(frozen=True)
class Send:
    """`alone()` sends it by itself; sends of the same `key` queued together are sent once, as
    `together([item, ...])` in the order queued."""

    alone: Callable[[], object]
    key: str | None = None
    item: Any = None
    together: Callable[[list], object] | None = None


def submit(send: Send) -> None:
    """Make the send on the publisher thread, soon."""
    global _unsent
    _ensure_thread()
    with _lock:
        _unsent += 1
    _sends.put(send)


def merged(sends: list[Send]) -> list[Callable[[], object]]:
    """The sends to make for these, in the order queued: those of one key as one."""
    keyed: dict[str, list[Send]] = {}
    for send in sends:
        if send.key is not None:
            keyed.setdefault(send.key, []).append(send)
    out: list[Callable[[], object]] = []
    for send in sends:
        group = keyed.get(send.key) if send.key is not None else None
        if group is None or len(group) == 1:
            out.append(send.alone)
        elif group[0] is send:
            out.append(lambda group=group: group[0].together([s.item for s in group]))
    return out


def _ensure_thread() -> None:
    global _owner_pid, _sends, _unsent
    if _owner_pid == os.getpid():
        return
    with _lock:
        if _owner_pid == os.getpid():
            return
        _sends, _unsent = queue.SimpleQueue(), 0  # a forked child inherits none of its parent's
        threading.Thread(target=_run, args=(_sends,), name="celery-publisher", daemon=True).start()
        _owner_pid = os.getpid()


def _run(sends: queue.SimpleQueue) -> None:
    global _unsent
    while True:
        taken = _taken(sends)
        for send in merged(taken):
            try:
                send()
            except Exception:  # a bug in a send must not stop the ones after it
                log.exception("a background Celery send failed (a sweep will redo it)")
        with _lock:
            _unsent -= len(taken)


def _taken(sends: queue.SimpleQueue) -> list[Send]:
    """The next send, and those queued within the linger if it can go together with others."""
    taken = [sends.get()]
    if taken[0].key is None:
        return taken
    ends = time.monotonic() + settings.CELERY_PUBLISH_LINGER_SECONDS
    while len(taken) < MOST_TOGETHER and (wait := ends - time.monotonic()) > 0:
        try:
            taken.append(sends.get(timeout=wait))
        except queue.Empty:
            break
    return taken


@atexit.register
def _drain() -> None:
    if _owner_pid != os.getpid():
        return
    deadline = time.monotonic() + DRAIN_SECONDS
    while _unsent > 0 and time.monotonic() < deadline:
        time.sleep(0.01)
