"""The ledger's shape:

- a reversal's transfers are rows (`ReversalTransfer`, PROTECT) instead of JSON lists of ids; the
  existing lists are moved, in order;
- the discrepancy kinds belong to the checks that report them (no choices here);
- the BRIN and prefix indexes made by 0004 enter the models' state (the database has them);
- the ledger's SQL moves into files (the same functions as 0002, now reviewable), frozen as this
  migration's `0005_post_batch.pg.sql` and `0005_guards.pg.sql`.
"""

import django.contrib.postgres.indexes
import django.db.models.deletion
from django.db import migrations, models

from wallets.models import sql

MOVE_REVERSAL_TRANSFERS = """
INSERT INTO wallets_reversaltransfer (reversal_id, transfer_id, role)
SELECT r.id, t.value::bigint, 'target'
  FROM wallets_reversal r, jsonb_array_elements_text(r.transfer_ids) WITH ORDINALITY t(value, n)
UNION ALL
SELECT r.id, t.value::bigint, 'posted'
  FROM wallets_reversal r,
       jsonb_array_elements_text(r.posted_transfer_ids) WITH ORDINALITY t(value, n);
"""
RESTORE_REVERSAL_TRANSFERS = """
UPDATE wallets_reversal r SET
    transfer_ids = coalesce((SELECT jsonb_agg(l.transfer_id ORDER BY l.transfer_id)
                               FROM wallets_reversaltransfer l
                              WHERE l.reversal_id = r.id AND l.role = 'target'), '[]'),
    posted_transfer_ids = coalesce((SELECT jsonb_agg(l.transfer_id ORDER BY l.id)
                                      FROM wallets_reversaltransfer l
                                     WHERE l.reversal_id = r.id AND l.role = 'posted'), '[]');
"""


class Migration(migrations.Migration):
    dependencies = [("wallets", "0004_finance_roles_indexes")]

    operations = [
        migrations.CreateModel(
            name="ReversalTransfer",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "role",
                    models.CharField(
                        choices=[("target", "Target"), ("posted", "Posted")], max_length=8
                    ),
                ),
                (
                    "reversal",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="links",
                        to="wallets.reversal",
                    ),
                ),
                (
                    "transfer",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="wallets.transfer",
                    ),
                ),
            ],
        ),
        migrations.AddConstraint(
            model_name="reversaltransfer",
            constraint=models.UniqueConstraint(
                fields=("reversal", "transfer"), name="reversaltransfer_unique_transfer"
            ),
        ),
        migrations.RunSQL(MOVE_REVERSAL_TRANSFERS, RESTORE_REVERSAL_TRANSFERS),
        migrations.RemoveField(model_name="reversal", name="posted_transfer_ids"),
        migrations.RemoveField(model_name="reversal", name="transfer_ids"),
        migrations.AlterField(
            model_name="discrepancy",
            name="kind",
            field=models.CharField(help_text="The check's name for what it found.", max_length=32),
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddIndex(
                    model_name="entry",
                    index=django.contrib.postgres.indexes.BrinIndex(
                        fields=["created_at"], name="entry_created_brin"
                    ),
                ),
                migrations.AddIndex(
                    model_name="transfer",
                    index=models.Index(
                        fields=["reference"],
                        name="transfer_reference_prefix_idx",
                        opclasses=["varchar_pattern_ops"],
                    ),
                ),
            ],
            database_operations=[],  # 0004 created them
        ),
        migrations.RunSQL(
            sql.load("0005_post_batch.pg.sql") + sql.load("0005_guards.pg.sql"),
            migrations.RunSQL.noop,
        ),
    ]
