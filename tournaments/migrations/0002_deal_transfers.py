"""A deal's transfers are rows (`DealTransfer`, PROTECT) instead of a JSON list of ids; the
existing lists are moved in their order. The idempotency record leaves for the API app
(`rummy_ledger.api`), which takes over its table (state only here)."""

import django.db.models.deletion
from django.db import migrations, models

MOVE = """
INSERT INTO tournaments_dealtransfer (deal_id, transfer_id)
SELECT d.id, t.value::bigint
  FROM tournaments_deal d, jsonb_array_elements_text(d.transfers) WITH ORDINALITY t(value, n)
 ORDER BY d.id, t.n;
"""
RESTORE = """
UPDATE tournaments_deal d SET transfers = coalesce(
    (SELECT jsonb_agg(l.transfer_id ORDER BY l.id) FROM tournaments_dealtransfer l
      WHERE l.deal_id = d.id), '[]');
"""


class Migration(migrations.Migration):
    dependencies = [
        ("tournaments", "0001_initial"),
        ("wallets", "0005_relations_sql_indexes"),
        ("api", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="DealTransfer",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "deal",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="transfer_links",
                        to="tournaments.deal",
                    ),
                ),
                (
                    "transfer",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="wallets.transfer",
                    ),
                ),
            ],
            options={"ordering": ["id"]},
        ),
        migrations.RunSQL(MOVE, RESTORE),
        migrations.RemoveField(model_name="deal", name="transfers"),
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="IdempotencyRecord")],
            database_operations=[],  # the table is now api_idempotencyrecord
        ),
    ]
