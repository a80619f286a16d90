"""The idempotency record, taken over from the games app with its rows (the table is renamed)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("wallets", "0001_initial"),
        ("tournaments", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="IdempotencyRecord",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("key", models.CharField(max_length=128)),
                        ("request_hash", models.CharField(max_length=64)),
                        ("status_code", models.PositiveSmallIntegerField(null=True)),
                        ("response", models.JSONField(null=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "client",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="+",
                                to="wallets.apiclient",
                            ),
                        ),
                    ],
                    options={
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("client", "key"), name="idempotency_unique_key"
                            )
                        ],
                    },
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    "ALTER TABLE tournaments_idempotencyrecord RENAME TO api_idempotencyrecord",
                    "ALTER TABLE api_idempotencyrecord RENAME TO tournaments_idempotencyrecord",
                ),
            ],
        ),
    ]
