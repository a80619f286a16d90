"""Emptying the test database between transactional tests (the live server's, the browser's, the
workers'): the state Django's `flush` leaves, at a fraction of its cost.

Django's flush TRUNCATEs every table, then sends `post_migrate`, whose handlers write the content
types, permissions, finance roles and GST history back (about 0.3 s a test on 2 cores, and 342
tests pay it). Most tables are empty after a test, and what `post_migrate` writes is seldom
touched. So the first flush of a process is Django's own, and it records the tables that hold
rows right after it (what `post_migrate` wrote) with a digest of each. Every later flush
TRUNCATEs only the other tables that hold rows; if a digest then differs (a test changed a role,
a rate or a permission, or a TRUNCATE cascaded into one), Django's flush runs after all.
"""

from __future__ import annotations

from django.core.management import call_command
from django.db import connections

_AFTER_FLUSH: dict[str, dict[str, str]] = {}  # alias -> {table: digest} after Django's flush


def fixture_teardown(test_case) -> None:
    """`TransactionTestCase._fixture_teardown` for tests without `available_apps` or serialized
    rollback (this suite uses neither)."""
    for alias in test_case._databases_names(include_mirrors=False):
        if alias not in _AFTER_FLUSH or not _emptied_quickly(alias):
            _django_flush(alias)


def _django_flush(alias: str) -> None:
    call_command("flush", verbosity=0, interactive=False, database=alias, reset_sequences=False)
    with connections[alias].cursor() as cursor:
        _AFTER_FLUSH[alias] = _digests(cursor, _with_rows(cursor, _tables(alias)))


def _emptied_quickly(alias: str) -> bool:
    """TRUNCATE what the test wrote; False if what `post_migrate` wrote is not as it was."""
    kept = _AFTER_FLUSH[alias]
    connection = connections[alias]
    with connection.cursor() as cursor:
        written = [t for t in _with_rows(cursor, _tables(alias)) if t not in kept]
        if written:
            names = ", ".join(connection.ops.quote_name(t) for t in written)
            cursor.execute(f"TRUNCATE {names} CASCADE")
        return _digests(cursor, list(kept)) == kept


def _tables(alias: str) -> list[str]:
    return connections[alias].introspection.django_table_names(
        only_existing=True, include_views=False
    )


def _with_rows(cursor, tables: list[str]) -> list[str]:
    quote = cursor.db.ops.quote_name
    cursor.execute(
        " UNION ALL ".join(f"SELECT %s WHERE EXISTS (SELECT FROM {quote(t)})" for t in tables),
        tables,
    )
    return [row[0] for row in cursor.fetchall()]


def _digests(cursor, tables: list[str]) -> dict[str, str]:
    if not tables:
        return {}
    quote = cursor.db.ops.quote_name
    cursor.execute(
        " UNION ALL ".join(
            f"SELECT %s, md5(string_agg(t::text, ',' ORDER BY t::text)) FROM {quote(table)} t"
            for table in tables
        ),
        tables,
    )
    return dict(cursor.fetchall())
