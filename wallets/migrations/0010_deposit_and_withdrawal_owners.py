"""Deposits and withdrawals belong to the payments client that made them.

Backfill of the rows already there, safest first:
1. the client whose request created it, as its stored idempotency record says (the 201 answer
   naming the withdrawal or deposit transfer): every withdrawal request carried a key, so every
   withdrawal made over the API is traced; a deposit only if its request carried one;
2. otherwise, when exactly one client has ever held the payments scope, that client (no other
   could have made it);
3. otherwise no client: no client sees or settles it (404), a reuse of its reference is 409. A
   withdrawal left so is reported stuck by reconciliation; an operator assigns its client in
   the database once the gateway's records say whose it is.
"""

import django.db.models.deletion
from django.db import migrations, models

DEPOSITS = """
INSERT INTO wallets_gatewaydeposit (reference, client_id, transfer_id)
SELECT t.reference, NULL, t.id FROM wallets_transfer t
WHERE t.kind = 'deposit' AND t.idempotency_key = 'deposit:' || t.reference;

UPDATE wallets_gatewaydeposit d SET client_id = r.client_id
FROM api_idempotencyrecord r
WHERE r.status_code = 201 AND r.response ? 'credited'
  AND r.response ->> 'transfer_id' = d.transfer_id::text;

UPDATE wallets_withdrawal w SET client_id = r.client_id
FROM api_idempotencyrecord r
WHERE r.status_code = 201 AND r.response ? 'net_winnings'
  AND r.response ->> 'withdrawal_id' = w.id::text;
"""

SOLE_PAYMENTS_CLIENT = """
WITH sole AS (
    SELECT min(id) AS id FROM wallets_apiclient WHERE scopes @> '["payments"]'::jsonb
    HAVING count(*) = 1
)
UPDATE {table} SET client_id = (SELECT id FROM sole)
WHERE client_id IS NULL AND EXISTS (SELECT 1 FROM sole);
"""


class Migration(migrations.Migration):
    dependencies = [
        ("wallets", "0009_bonus_protection"),
        ("api", "0001_initial"),  # the idempotency records the backfill reads
    ]
    # ...while their stored answer is still the jsonb `response` (0002 keeps it as text instead)
    run_before = [("api", "0002_idempotency_body_as_sent")]

    operations = [
        migrations.AddField(
            model_name="withdrawal",
            name="client",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="withdrawals",
                to="wallets.apiclient",
            ),
        ),
        migrations.CreateModel(
            name="GatewayDeposit",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("reference", models.CharField(max_length=128, unique=True)),
                (
                    "client",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="deposits",
                        to="wallets.apiclient",
                    ),
                ),
                (
                    "transfer",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="deposit",
                        to="wallets.transfer",
                    ),
                ),
            ],
        ),
        migrations.RunSQL(DEPOSITS, migrations.RunSQL.noop),
        migrations.RunSQL(
            SOLE_PAYMENTS_CLIENT.format(table="wallets_gatewaydeposit"), migrations.RunSQL.noop
        ),
        migrations.RunSQL(
            SOLE_PAYMENTS_CLIENT.format(table="wallets_withdrawal"), migrations.RunSQL.noop
        ),
    ]
