"""The API client is the API layer's (`api.ApiClient`, api 0003): the ledger's fields point at
it and the ledger forgets its model. State only: the table `wallets_apiclient`, its rows and the
foreign keys on it stay as they are. The games' fields move first (tournaments 0011 runs
before this one)."""

import django.db.models.deletion
from django.db import migrations, models


def _client(related_name: str, *, optional: bool = False, help_text: str = ""):
    extra = {"blank": True, "null": True} if optional else {}
    if help_text:
        extra["help_text"] = help_text
    return models.ForeignKey(
        on_delete=django.db.models.deletion.PROTECT,
        related_name=related_name,
        to="api.apiclient",
        **extra,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("wallets", "0018_post_batch_fewer_statements"),
        ("api", "0003_apiclient_from_wallets"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField("clientpairing", "games_client", _client("+")),
                migrations.AlterField("clientpairing", "payments_client", _client("+")),
                migrations.AlterField("playerclient", "client", _client("+")),
                migrations.AlterField("clientescrowtake", "client", _client("+")),
                migrations.AlterField(
                    "gatewaydeposit", "client", _client("deposits", optional=True)
                ),
                migrations.AlterField(
                    "withdrawal", "client", _client("withdrawals", optional=True)
                ),
                migrations.AlterField(
                    "winddown",
                    "client",
                    _client(
                        "+",
                        optional=True,
                        help_text="the payments client (gateway) that owns the refunds and "
                        "reports them",
                    ),
                ),
                migrations.DeleteModel(name="ApiClient"),
            ],
            database_operations=[],
        ),
    ]
