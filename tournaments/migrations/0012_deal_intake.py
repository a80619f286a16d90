"""`deal_intake_store`: a posted deal stored in one statement (one round trip per write
on the hot paths). The SQL is frozen beside this migration (wallets/models/sql.py explains the
rule)."""

from pathlib import Path

from django.db import migrations

from wallets.models import sql

UNDO = (
    "DROP FUNCTION IF EXISTS deal_intake_store("
    "bigint, integer, integer, text, jsonb, text, bigint, text, text, integer, text, text);"
)


class Migration(migrations.Migration):
    dependencies = [
        ("tournaments", "0011_api_client_moved"),
        ("api", "0004_idempotency_claim"),
    ]

    operations = [
        migrations.RunSQL(sql.load("0012_deal_intake.pg.sql", folder=Path(__file__).parent), UNDO)
    ]
