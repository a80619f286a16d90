"""The balance check (`ledger_transfer_balanced`, 0021_guards.pg.sql) keeps one generic plan.

PL/pgSQL plans a query with its parameters' values on each of its first five calls and keeps a
generic plan only if that costs no more on paper. Over the partitioned entries the generic plan
lists every month's partition (it prunes them when it runs), so where the month's partition has
no statistics yet (a freshly migrated server, the first days of each month until autovacuum
analyses it) the check was planned again for every entry posted: 0.24-0.30 ms of planning for a
0.03-0.05 ms lookup, a batched posting at half speed (docs/benchmarks.md). The generic plan
prunes to the entry's month at run time and uses the transfer's index there whatever the
statistics say. ALTER keeps the function's frozen body; a later CREATE OR REPLACE must say it
again (tests/wallets/test_partitions.py checks it is set)."""

from django.db import migrations

FUNCTION = "ledger_transfer_balanced()"


class Migration(migrations.Migration):
    dependencies = [
        ("wallets", "0025_pair_clearances"),
    ]

    operations = [
        migrations.RunSQL(
            f"ALTER FUNCTION {FUNCTION} SET plan_cache_mode = force_generic_plan",
            f"ALTER FUNCTION {FUNCTION} RESET plan_cache_mode",
        ),
    ]
