"""`ledger_post_batch` takes the per-transfer maximum (`LEDGER_MAX_TRANSFER`) and refuses an entry
above it (RL007): the function gains a parameter, so the old signature is dropped and this
migration's version, 0007_post_batch.pg.sql, installed."""

from django.db import migrations

from wallets.models import sql

OLD_SIGNATURE = """
DROP FUNCTION IF EXISTS ledger_post_batch(
    text[], text[], text[], text[], bigint[], text[], int[], bigint[], numeric[], text[], text);
"""


class Migration(migrations.Migration):
    dependencies = [("wallets", "0006_guard_keyed_lookups")]

    operations = [
        migrations.RunSQL(
            OLD_SIGNATURE + sql.load("0007_post_batch.pg.sql"), migrations.RunSQL.noop
        ),
    ]
