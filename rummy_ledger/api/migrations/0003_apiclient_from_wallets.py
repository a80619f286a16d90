"""The API client leaves the ledger app for the API layer (rummy_ledger/api): the model moves,
its table does not. State only: `wallets_apiclient` keeps its name, rows, constraints and every
foreign key pointing at it (wallets 0019 and tournaments 0011 re-point the apps' fields, in state
too). The content type moves with it, so the `*_apiclient` permissions and the admin's history
of the clients stay attached."""

import django.db.models.deletion
from django.db import migrations, models


def content_type_moves(apps, schema_editor, source="wallets", target="api"):
    ContentType = apps.get_model("contenttypes", "ContentType")
    types = ContentType.objects.using(schema_editor.connection.alias)
    if not types.filter(app_label=target, model="apiclient").exists():
        types.filter(app_label=source, model="apiclient").update(app_label=target)


def content_type_returns(apps, schema_editor):
    content_type_moves(apps, schema_editor, source="api", target="wallets")


class Migration(migrations.Migration):
    dependencies = [
        ("api", "0002_idempotency_body_as_sent"),
        ("wallets", "0017_client_escrow_takes"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ApiClient",
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
                        ("name", models.CharField(max_length=100, unique=True)),
                        ("key_prefix", models.CharField(max_length=16, unique=True)),
                        ("key_hash", models.CharField(max_length=64)),
                        ("scopes", models.JSONField(default=list)),
                        ("is_active", models.BooleanField(default=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "paired_players_only",
                            models.BooleanField(
                                db_default=False,
                                default=False,
                                help_text="games: seat only players of the payments clients this client is paired with",
                            ),
                        ),
                        (
                            "hourly_escrow_cap",
                            models.DecimalField(
                                blank=True,
                                decimal_places=2,
                                help_text="games: the most INR its games may take into escrow in any rolling hour (entries and rejoins); empty: no cap",
                                max_digits=14,
                                null=True,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "wallets_apiclient",
                        "constraints": [
                            models.CheckConstraint(
                                condition=models.Q(
                                    ("hourly_escrow_cap__isnull", True),
                                    ("hourly_escrow_cap__gt", 0),
                                    _connector="OR",
                                ),
                                name="apiclient_escrow_cap_positive",
                            )
                        ],
                    },
                ),
                migrations.AlterField(
                    model_name="idempotencyrecord",
                    name="client",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="api.apiclient",
                    ),
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_type_moves, content_type_returns),
    ]
