"""The games point at the API layer's client (`api.ApiClient`, the same table: state only),
before the ledger app forgets its model (wallets 0019)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("api", "0003_apiclient_from_wallets"),
        ("tournaments", "0010_new_tournament_proposals"),
    ]
    run_before = [("wallets", "0019_api_client_moved")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="game",
                    name="client",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="games",
                        to="api.apiclient",
                    ),
                ),
                migrations.AlterField(
                    model_name="tournament",
                    name="client",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="tournaments",
                        to="api.apiclient",
                    ),
                ),
            ],
            database_operations=[],
        ),
    ]
