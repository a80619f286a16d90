"""The ledger's PL/pgSQL, one reviewable file per concern, loaded by the migrations.

Each file is the current version and is written to be loaded again (`CREATE OR REPLACE`): a
change to a file comes with a migration that reloads it, and a test compares the functions in
the database with the files.
"""

from pathlib import Path

FILES = ("post_batch.sql", "guards.sql", "gst_rates.sql")


def load(name: str) -> str:
    return (Path(__file__).parent / name).read_text()
