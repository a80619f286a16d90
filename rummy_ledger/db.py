"""Database helpers shared by the apps."""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction

# The alias a finance page's reads go to while it runs (rummy_ledger/replica.py: the standby's
# when it is close enough); None outside one: the primary.
reading_alias: ContextVar[str | None] = ContextVar("finance_read_alias", default=None)


def read_connection():
    """The connection a raw SQL read takes: a finance page's, else the primary's."""
    return connections[reading_alias.get() or DEFAULT_DB_ALIAS]


@contextmanager
def snapshot() -> Iterator[None]:
    """Several reads that must agree with each other, from one REPEATABLE READ snapshot.

    Under READ COMMITTED every query sees the latest commits, so a game read before a settlement
    commits and its deals read after it would disagree. Inside an enclosing transaction the
    reads already share it, and the isolation level can no longer change.
    """
    if connection.in_atomic_block:
        yield
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        yield


# Advisory lock keys (one bigint each; advisory locks are per database). The digits spell "migr".
MIGRATE_LOCK = 0x6D696772


def session_connection():
    """The connection for what holds a session (a session-level advisory lock): the primary's
    outside the pool (`DIRECT_DATABASE_URL`) when a pool in transaction mode is in front of it,
    else the default one."""
    return connections[settings.SESSION_DATABASE_ALIAS]


@contextmanager
def advisory_lock(key: int) -> Iterator[None]:
    """Hold a session-level PostgreSQL advisory lock, waiting for it: e.g. two nodes' `serve`
    starting at once migrate one after the other, not both at once."""
    session = session_connection()
    with session.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [key])
    try:
        yield
    finally:
        with session.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [key])
