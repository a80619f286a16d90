"""`deal_games_lock` replaces `deal_intake_store`: the intake locks the games of the deals posted
(a game held by another transaction reported, not raised), reads them, checks the deals and
inserts them; the API layer records the Idempotency-Key. The SQL is frozen beside this migration
(wallets/models/sql.py explains the rule); undone by 0012's file."""

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
            sql.load("0014_deal_games_lock.pg.sql", folder=HERE),
            "DROP FUNCTION IF EXISTS deal_games_lock(bigint, text[]);"
            + sql.load("0012_deal_intake.pg.sql", folder=HERE),
        )
    ]
