"""Real concurrency for tests: threads that each use their own database connection."""

import threading
from collections.abc import Callable
from typing import Any


def run_in_threads(work: Callable[[int], Any], count: int) -> list:
    """Run work(n) for n in range(count) in threads released together by a barrier.

    Each result is what work returned or the exception it raised; every thread closes its own
    connection, so nothing leaks into the next test.
    """
    from django.db import connection

    barrier = threading.Barrier(count)
    results: list = [None] * count

    def target(n: int) -> None:
        try:
            barrier.wait()
            results[n] = work(n)
        except Exception as exc:  # surfaced through the results, asserted by the caller
            results[n] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=target, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return results
