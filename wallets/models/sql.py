"""The ledger's PL/pgSQL, frozen per migration (django-hordak's `0047_get_balance.pg.sql`).

Each version of a function is a file beside the migration that installs it,
`wallets/migrations/<migration number>_<concern>.pg.sql`, and a migration loads its own files
only: a fresh database replays history exactly, and editing a file that a migration has shipped
changes nothing silently (tests/wallets/test_sql_files.py migrates a fresh database step by step
and compares `pg_proc` with the files). The live version of a concern is its newest file; a
change is a new file with the next migration's number, and that migration.
"""

from pathlib import Path

from django.db import migrations

MIGRATIONS = Path(__file__).parents[1] / "migrations"  # wallets/migrations
# The two functions every posting runs, as ALTER FUNCTION names them: the settings their
# migrations give them (0026, 0028) are kept with their frozen bodies by ALTER, not in the files.
POSTING_FUNCTIONS = [
    "ledger_transfer_balanced()",
    "ledger_post_batch(text[], text[], text[], text[], bigint[], text[], int[], bigint[], "
    "numeric[], text[], text, numeric)",
]


def load(name: str, *, folder: Path = MIGRATIONS) -> str:
    """The SQL of one frozen file, e.g. `0007_post_batch.pg.sql`; another app's migrations keep
    theirs the same way and pass their own `folder`."""
    return (folder / name).read_text()


def posting_functions_set(setting: str, value: str) -> list[migrations.RunSQL]:
    """A migration's operations giving both posting functions `setting = value` (reversed by
    RESET)."""
    return [
        migrations.RunSQL(
            f"ALTER FUNCTION {function} SET {setting} = {value}",
            f"ALTER FUNCTION {function} RESET {setting}",
        )
        for function in POSTING_FUNCTIONS
    ]
