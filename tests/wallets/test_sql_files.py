"""The PL/pgSQL is frozen per migration (wallets/models/sql.py), in each app that has some (the
ledger, the games' deal intake, the API layer's key claim): a fresh database migrated step by step
runs, after each migration, exactly the newest file of each function at or before its app's step
(a file that drops a function removes it), and the test database runs the newest files. A
migration loading today's file at an old step, or a shipped file edited, fails here."""

import importlib
import re
from pathlib import Path

import pytest
from django.db import connection, connections
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.state import ProjectState

from wallets.models import sql

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = {  # app label -> where its frozen files live
    "wallets": sql.MIGRATIONS,
    "tournaments": ROOT / "tournaments" / "migrations",
    "api": ROOT / "rummy_ledger" / "api" / "migrations",
}
FUNCTIONS = {
    "ledger_post_batch",
    "ledger_transfer_balanced",
    "ledger_append_only",
    "ledger_month_closed",
    "gst_rate_history_frozen",
    "deal_intake_store",
    "deal_games_lock",
    "idempotency_claim",
}
REPLAY = "sql_replay"


def _bodies(text: str) -> dict[str, str | None]:
    """Function name -> body between the $$ quotes, for every function a text defines (None
    for one it drops)."""
    dropped = re.finditer(r"DROP FUNCTION (?:IF EXISTS )?(\w+)\(", text)
    found = re.finditer(r"CREATE (?:OR REPLACE )?FUNCTION (\w+)\(.*?\$\$(.*?)\$\$", text, re.S)
    return {m.group(1): None for m in dropped} | {m.group(1): m.group(2) for m in found}


def _frozen_files(app: str = "wallets") -> list[tuple[int, dict[str, str]]]:
    """(migration number, the functions its file defines) for an app's frozen files, oldest
    first."""
    files = sorted(FOLDERS[app].glob("*.pg.sql"))
    return [(int(f.name[:4]), _bodies(f.read_text())) for f in files]


def _expected_after(number: int, others: dict[str, int] | None = None) -> dict[str, str]:
    """The functions a database runs after wallets migration `number` (and the other apps'
    migrations `others`): 0002's, then each function's newest frozen file at or before its app's
    step."""
    first = importlib.import_module("wallets.migrations.0002_ledger_sql")
    expected = _bodies(first.POST_BATCH + first.BALANCED) if number >= 2 else {}
    for app, step in {**(others or {}), "wallets": number}.items():
        for installed_by, functions in _frozen_files(app):
            if installed_by <= step:
                expected.update(functions)
    return {name: body for name, body in expected.items() if body is not None}


def _live(conn) -> dict[str, str]:
    with conn.cursor() as cursor:
        cursor.execute(
            "SELECT proname, prosrc FROM pg_proc WHERE proname = ANY(%s)", [list(FUNCTIONS)]
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


@pytest.mark.django_db  # the test database's rows are compared before and after
def test_a_fresh_database_replays_each_version_of_the_ledger_sql(fresh_database):
    # given: a fresh database and every migration of the project, in order
    executor = MigrationExecutor(fresh_database)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes(), clean_start=True)
    state = ProjectState(real_apps=executor.loader.unmigrated_apps)
    checked: dict[str, list[int]] = {app: [] for app in FOLDERS}
    steps = dict.fromkeys(FOLDERS, 0)
    untouched = _rows_of_the_test_database()
    for migration, _backwards in plan:
        # when: one migration is applied
        state = executor.apply_migration(state, migration)
        if migration.app_label not in FOLDERS:
            continue
        # then: the database runs the frozen versions of each app's step, no later one
        steps[migration.app_label] = number = int(migration.name[:4])
        assert _live(fresh_database) == _expected_after(steps["wallets"], steps), migration.name
        checked[migration.app_label].append(number)
    for app, numbers in checked.items():
        assert numbers == list(range(1, len(numbers) + 1)), app
        # every frozen file was installed at its step
        assert {n for n, _ in _frozen_files(app)} <= set(numbers), app
    assert _expected_after(5) != _expected_after(6) != _expected_after(7)
    # every migration's Python wrote to the database it migrated, never to the default one
    assert _rows_of_the_test_database() == untouched


def _rows_of_the_test_database() -> dict[str, int]:
    tables = ["auth_group", "auth_permission", "auth_group_permissions", "wallets_account"]
    with connection.cursor() as cursor:
        return {
            table: cursor.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in tables
        }


@pytest.mark.django_db
def test_the_test_database_runs_the_newest_files():
    newest = _expected_after(10_000, dict.fromkeys(FOLDERS, 10_000))
    # dropped: the deal intake's store by tournaments 0014, the key claim by api 0005
    assert set(newest) == FUNCTIONS - {"deal_intake_store", "idempotency_claim"}
    assert _live(connection) == newest
