"""A single transfer costs less. `ledger_post_batch` in fewer statements
(0018_post_batch.pg.sql, same signature and contract), and the entries lose their index on
`account_id` alone: `entry_account_time_idx` (account_id, created_at) already serves every
look-up by account, and each entry paid for both."""

from django.db import migrations, models

from wallets.models import sql


class Migration(migrations.Migration):
    dependencies = [("wallets", "0017_client_escrow_takes")]

    operations = [
        migrations.AlterField(
            model_name="entry",
            name="account",
            field=models.ForeignKey(
                db_index=False,
                on_delete=models.deletion.PROTECT,
                related_name="entries",
                to="wallets.account",
            ),
        ),
        migrations.RunSQL(sql.load("0018_post_batch.pg.sql"), migrations.RunSQL.noop),
    ]
