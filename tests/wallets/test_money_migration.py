"""Migration 0008 gives every existing player a `pending` account, and rewrites no transfer."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.soak]

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

    new = executor.loader.project_state(AFTER).apps  # the models as 0008 left them
    NewAccount, NewPlayer = new.get_model("wallets", "Account"), new.get_model("wallets", "Player")
    Transfer = new.get_model("wallets", "Transfer")

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


def test_bonus_held_before_lots_becomes_one_lot_per_player():
    executor = MigrationExecutor(connection)
    executor.migrate([("wallets", "0008_money_in_out")])
    old = executor.loader.project_state([("wallets", "0008_money_in_out")]).apps
    Player, Account = old.get_model("wallets", "Player"), old.get_model("wallets", "Account")
    Transfer, Entry = old.get_model("wallets", "Transfer"), old.get_model("wallets", "Entry")
    player = Player.objects.create(external_id="old-bonus")
    bonus = Account.objects.create(
        kind="player",
        code="player:old-bonus:bonus",
        player=player,
        bucket="bonus",
        balance=75,
        balance_currency="INR",
    )
    promotions = Account.objects.create(
        kind="platform", code="platform:promotions-old", balance=0, balance_currency="INR"
    )
    transfer = Transfer.objects.create(
        kind="bonus", reference="old", idempotency_key="old-bonus", content_hash="h"
    )
    Entry.objects.bulk_create(
        [
            Entry(transfer=transfer, account=promotions, amount=-75, amount_currency="INR"),
            Entry(transfer=transfer, account=bonus, amount=75, amount_currency="INR"),
        ]
    )

    executor = MigrationExecutor(connection)
    executor.migrate([("wallets", "0009_bonus_protection")])

    lots = executor.loader.project_state([("wallets", "0009_bonus_protection")]).apps
    lot = lots.get_model("wallets", "BonusLot").objects.get(player_id=player.pk)
    assert (lot.amount, lot.remaining, lot.transfer_id) == (75, 75, transfer.pk)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
