"""`deal_intake_store` dropped: the intake locks the game in its read and stores a deal with a
plain INSERT, and the API layer claims the Idempotency-Key. The SQL is frozen beside this
migration (wallets/models/sql.py explains the rule); undone by 0012's file."""

from pathlib import Path

from django.db import migrations

from wallets.models import sql

HERE = Path(__file__).parent


class Migration(migrations.Migration):
    dependencies = [
        ("tournaments", "0013_game_client_index_in_unique"),
    ]

    operations = [
        migrations.RunSQL(
            sql.load("0014_deal_intake_store_dropped.pg.sql", folder=HERE),
            sql.load("0012_deal_intake.pg.sql", folder=HERE),
        )
    ]
