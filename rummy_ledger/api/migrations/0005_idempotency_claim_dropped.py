"""`idempotency_claim` dropped: the API layer records an Idempotency-Key with its answer at the
end of the write's transaction (rummy_ledger/api/idempotency.py), and no write's SQL claims it.
The SQL is frozen beside this migration (wallets/models/sql.py explains the rule); undone by
0004's file."""

from pathlib import Path

from django.db import migrations

from wallets.models import sql

HERE = Path(__file__).parent


class Migration(migrations.Migration):
    dependencies = [("api", "0004_idempotency_claim")]

    operations = [
        migrations.RunSQL(
            sql.load("0005_idempotency_claim_dropped.pg.sql", folder=HERE),
            sql.load("0004_idempotency_claim.pg.sql", folder=HERE),
        )
    ]
