"""Two nodes' `serve` starting at once migrate in turn: the second waits for the first's
advisory lock (rummy_ledger.db.advisory_lock around `migrate`)."""

import threading
import time

import pytest
from django.db import connection, connections

from rummy_ledger.db import MIGRATE_LOCK, advisory_lock

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_second_holder_waits_until_the_first_releases():
    # given another node holding the lock on its own session
    other = connections.create_connection("default")
    with other.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [MIGRATE_LOCK])
    entered = threading.Event()

    def second_node():
        try:
            with advisory_lock(MIGRATE_LOCK):
                entered.set()
        finally:
            connection.close()  # this thread's connection

    thread = threading.Thread(target=second_node)
    try:
        # when this node asks for it
        thread.start()
        # then it waits while the other holds it, and goes on once it is released
        assert not entered.wait(0.5)
        released_at = time.monotonic()
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [MIGRATE_LOCK])
        assert entered.wait(5)
        assert time.monotonic() - released_at < 5
    finally:
        thread.join(10)
        other.close()
