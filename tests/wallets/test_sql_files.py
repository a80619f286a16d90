"""The ledger's SQL lives in wallets/sql/ and the database runs exactly that: a change to a file
without a migration that reloads it fails here."""

import re

import pytest
from django.db import connection

from wallets import sql

pytestmark = pytest.mark.django_db


def _bodies(text: str) -> dict[str, str]:
    """Function name -> body between the $$ quotes, for every function a file defines."""
    found = re.finditer(r"CREATE OR REPLACE FUNCTION (\w+)\(.*?\$\$(.*?)\$\$", text, re.S)
    return {m.group(1): m.group(2) for m in found}


def test_the_database_runs_the_functions_in_the_files():
    files = {name: body for f in sql.FILES for name, body in _bodies(sql.load(f)).items()}
    assert set(files) == {
        "ledger_post_batch",
        "ledger_transfer_balanced",
        "ledger_append_only",
        "gst_rate_history_frozen",
    }
    with connection.cursor() as cursor:
        cursor.execute("SELECT proname, prosrc FROM pg_proc WHERE proname = ANY(%s)", [list(files)])
        live = dict(cursor.fetchall())
    assert live == files
