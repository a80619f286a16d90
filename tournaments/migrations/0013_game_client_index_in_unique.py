"""A game's client has no index of its own: game_unique_per_client (client, game_id) leads with
it. The second index let the planner, on stale statistics, find a game by scanning all of its
client's games. The index alone is dropped: letting Django alter the field would
drop and re-validate the foreign key, a scan of every game under an exclusive lock."""

import django.db.models.deletion
from django.db import migrations, models

INDEX = "tournaments_game_client_id_b2027eab"


class Migration(migrations.Migration):
    dependencies = [
        ("api", "0004_idempotency_claim"),
        ("tournaments", "0012_deal_intake"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="game",
                    name="client",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="games",
                        to="api.apiclient",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    f"DROP INDEX IF EXISTS {INDEX}",
                    f"CREATE INDEX IF NOT EXISTS {INDEX} ON tournaments_game (client_id)",
                ),
            ],
        ),
    ]
