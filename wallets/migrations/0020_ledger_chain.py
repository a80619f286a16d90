"""The hash chain through the ledger: each transfer records its transaction's id (`txid`, read in
commit order by the chain's job), the links and the daily digests, both append-only by the
ledger's own trigger function."""

import django.db.models.deletion
import django.db.models.functions.datetime
from django.db import migrations, models

import rummy_ledger.commit_order


class Migration(migrations.Migration):
    dependencies = [
        ("wallets", "0019_api_client_moved"),
    ]

    operations = [
        migrations.CreateModel(
            name="ChainDigest",
            fields=[
                ("day", models.DateField(primary_key=True, serialize=False)),
                ("through_seq", models.BigIntegerField()),
                (
                    "head",
                    models.CharField(help_text="The hash of link `through_seq`.", max_length=64),
                ),
                ("links", models.PositiveIntegerField()),
                (
                    "recorded_at",
                    models.DateTimeField(db_default=django.db.models.functions.datetime.Now()),
                ),
            ],
            options={
                "ordering": ["-day"],
            },
        ),
        migrations.CreateModel(
            name="ChainLink",
            fields=[
                ("seq", models.BigIntegerField(primary_key=True, serialize=False)),
                ("txid", models.BigIntegerField()),
                ("hash", models.CharField(max_length=64)),
                ("chained_at", models.DateTimeField()),
            ],
        ),
        migrations.AddField(
            model_name="transfer",
            name="txid",
            field=rummy_ledger.commit_order.Xid8Field(
                db_default=models.Func(function="pg_current_xact_id"), editable=False
            ),
        ),
        migrations.AddIndex(
            model_name="transfer",
            index=models.Index(fields=["txid", "id"], name="transfer_commit_order_idx"),
        ),
        migrations.AddField(
            model_name="chainlink",
            name="transfer",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.PROTECT, related_name="+", to="wallets.transfer"
            ),
        ),
        migrations.AddConstraint(
            model_name="chainlink",
            constraint=models.CheckConstraint(
                condition=models.Q(("seq__gte", 1)), name="chain_link_seq"
            ),
        ),
        migrations.RunSQL(
            """
            CREATE TRIGGER chain_link_append_only BEFORE UPDATE OR DELETE ON wallets_chainlink
                FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
            CREATE TRIGGER chain_digest_append_only BEFORE UPDATE OR DELETE ON wallets_chaindigest
                FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
            """,
            """
            DROP TRIGGER chain_link_append_only ON wallets_chainlink;
            DROP TRIGGER chain_digest_append_only ON wallets_chaindigest;
            """,
        ),
    ]
