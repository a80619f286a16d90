"""Migration 0008 gives every existing player a `pending` account, and rewrites no transfer."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("wallets", "0007_ledger_max_transfer")]
AFTER = [("wallets", "0008_money_in_out")]


def test_existing_players_get_a_pending_account_and_deposits_keep_their_shape():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    Player, Account = old.get_model("wallets", "Player"), old.get_model("wallets", "Account")
    player = Player.objects.create(external_id="old:timer")
    for bucket in ("deposit", "winnings", "bonus"):
        Account.objects.create(
            kind="player",
            code=f"player:old:timer:{bucket}",
            player=player,
            bucket=bucket,
            balance=0,
            balance_currency="INR",
        )
    transfer = old.get_model("wallets", "Transfer").objects.create(
        kind="deposit", reference="gw-1", idempotency_key="deposit:gw-1", content_hash="h"
    )

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)

    from wallets.models import Account as NewAccount
    from wallets.models import Player as NewPlayer
    from wallets.models import Transfer

    pending = NewAccount.objects.get(player_id=player.pk, bucket="pending")
    assert (pending.code, pending.kind, pending.balance.amount) == (
        "player:old:timer:pending",
        "player",
        0,
    )
    assert str(pending.balance.currency) == "INR"
    assert NewPlayer.objects.get(pk=player.pk).kyc_status == "none"
    assert Transfer.objects.get(pk=transfer.pk).content_hash == "h"

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
