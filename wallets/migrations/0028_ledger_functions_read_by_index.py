"""The ledger's two functions read what they lock and check straight from the indexes, never
through a bitmap: `ledger_post_batch` (0018_post_batch.pg.sql) and the balance check
`ledger_transfer_balanced` (0021_guards.pg.sql).

Where a table had no statistics yet (a freshly migrated server, a month's partition before
autovacuum's first ANALYZE), their generic plans (0026) read the accounts to lock with a bitmap
scan and a sort before locking them, and each transfer's entries with a bitmap scan of its
index; with statistics, an index scan in id order. Alone a batch cost the same either way; under
four clients posting batches of 100 between 1,000 players, the bitmap plans cost 13 %
(5,365-6,278 against 6,285-7,274 transfers/s, alternated; with this setting 6,838-7,218 against
6,805-8,094: docs/benchmarks.md). No statement of theirs gains from a bitmap: each reads a few
rows by key. ALTER keeps the functions' frozen bodies; a later CREATE OR REPLACE must say it
again (tests/wallets/test_partitions.py checks it is set, tests/wallets/test_guard_plan.py that
no plan of theirs has a bitmap)."""

from django.db import migrations

from wallets.models.sql import posting_functions_set


class Migration(migrations.Migration):
    dependencies = [
        ("wallets", "0027_monthclosebalance_close_index_is_the_unique_ones"),
    ]

    operations = posting_functions_set("enable_bitmapscan", "off")
