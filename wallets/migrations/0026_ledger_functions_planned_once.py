"""The ledger's two functions on every posting keep one generic plan per statement:
`ledger_post_batch` (0018_post_batch.pg.sql) and the balance check `ledger_transfer_balanced`
(0021_guards.pg.sql).

PL/pgSQL plans a statement with its parameters' values on each of its first five calls and keeps
a generic plan only if that costs no more on paper. A plan that knows a posting's arrays (two
legs, not the generic ten rows) always looks cheaper, and over the partitioned entries a generic
plan lists every month's partition (it prunes them when it runs), so both functions planned
every statement again at every call: about 0.3 ms of the 1.1-1.4 ms of server CPU a single
transfer costs, and where a month's partition had no statistics yet (a freshly migrated server,
the first days of each month) 0.24-0.30 ms of planning for each entry's 0.03-0.05 ms balance
check (docs/benchmarks.md). The generic plans are keyed lookups whatever the statistics say
(tests/wallets/test_guard_plan.py). ALTER keeps the functions' frozen bodies; a later CREATE OR
REPLACE must say it again (tests/wallets/test_partitions.py checks it is set)."""

from django.db import migrations

from wallets.models.sql import posting_functions_set


class Migration(migrations.Migration):
    dependencies = [
        ("wallets", "0025_pair_clearances"),
    ]

    operations = posting_functions_set("plan_cache_mode", "force_generic_plan")
