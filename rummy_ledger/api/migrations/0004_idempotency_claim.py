"""`idempotency_claim`: an Idempotency-Key claimed and its answer recorded in one statement
(one round trip per write on the hot paths). The SQL is frozen beside this migration
(wallets/models/sql.py explains the rule)."""

from pathlib import Path

from django.db import migrations

from wallets.models import sql

UNDO = (
    "DROP FUNCTION IF EXISTS idempotency_claim(bigint, text, text, integer, text, text, boolean);"
)


class Migration(migrations.Migration):
    dependencies = [("api", "0003_apiclient_from_wallets")]

    operations = [
        migrations.RunSQL(
            sql.load("0004_idempotency_claim.pg.sql", folder=Path(__file__).parent), UNDO
        )
    ]
