"""The ledger's SQL is frozen per migration (wallets/sql.py): a fresh database migrated step by
step runs, after each migration, exactly the newest file of each function at or before it, and
the test database runs the newest files. A migration loading today's file at an old step, or a
shipped file edited, fails here."""

import importlib
import re

import pytest
from django.db import connection, connections
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.state import ProjectState

from wallets import sql

LEDGER_FUNCTIONS = {
    "ledger_post_batch",
    "ledger_transfer_balanced",
    "ledger_append_only",
    "gst_rate_history_frozen",
}
REPLAY = "sql_replay"


def _bodies(text: str) -> dict[str, str]:
    """Function name -> body between the $$ quotes, for every function a text defines."""
    found = re.finditer(r"CREATE (?:OR REPLACE )?FUNCTION (\w+)\(.*?\$\$(.*?)\$\$", text, re.S)
    return {m.group(1): m.group(2) for m in found}


def _frozen_files() -> list[tuple[int, dict[str, str]]]:
    """(migration number, the functions its file defines) for every frozen file, oldest first."""
    files = sorted(sql.MIGRATIONS.glob("*.pg.sql"))
    return [(int(f.name[:4]), _bodies(f.read_text())) for f in files]


def _expected_after(number: int) -> dict[str, str]:
    """The functions a database runs after wallets migration `number`: 0002's, then each
    function's newest frozen file at or before that migration."""
    first = importlib.import_module("wallets.migrations.0002_ledger_sql")
    expected = _bodies(first.POST_BATCH + first.BALANCED) if number >= 2 else {}
    for installed_by, functions in _frozen_files():
        if installed_by <= number:
            expected.update(functions)
    return expected


def _live(conn) -> dict[str, str]:
    with conn.cursor() as cursor:
        cursor.execute(
            "SELECT proname, prosrc FROM pg_proc WHERE proname = ANY(%s)", [list(LEDGER_FUNCTIONS)]
        )
        return dict(cursor.fetchall())


@pytest.fixture
def fresh_database(django_db_blocker):
    """A connection to a new, empty database on the test server, dropped afterwards."""
    with django_db_blocker.unblock():
        name = f"{connection.settings_dict['NAME']}_replay"
        with connection._nodb_cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}"')
            cursor.execute(f'CREATE DATABASE "{name}"')
        connections.settings[REPLAY] = {**connection.settings_dict, "NAME": name}
        try:
            yield connections[REPLAY]
        finally:
            connections[REPLAY].close()
            del connections[REPLAY]
            del connections.settings[REPLAY]
            with connection._nodb_cursor() as cursor:
                cursor.execute(f'DROP DATABASE IF EXISTS "{name}"')


def test_a_fresh_database_replays_each_version_of_the_ledger_sql(fresh_database):
    # given: a fresh database and every migration of the project, in order
    executor = MigrationExecutor(fresh_database)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes(), clean_start=True)
    state = ProjectState(real_apps=executor.loader.unmigrated_apps)
    checked = []
    for migration, _backwards in plan:
        # when: one migration is applied
        state = executor.apply_migration(state, migration)
        if migration.app_label != "wallets":
            continue
        # then: the database runs the frozen versions of that step, no later one
        number = int(migration.name[:4])
        assert _live(fresh_database) == _expected_after(number), migration.name
        checked.append(number)
    assert checked == list(range(1, len(checked) + 1))
    # every frozen file was installed at its step, and some step changed each function
    assert {n for n, _ in _frozen_files()} <= set(checked)
    assert _expected_after(5) != _expected_after(6) != _expected_after(7)


@pytest.mark.django_db
def test_the_test_database_runs_the_newest_files():
    newest = _expected_after(10_000)
    assert set(newest) == LEDGER_FUNCTIONS
    assert _live(connection) == newest
