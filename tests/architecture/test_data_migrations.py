"""The data migrations that turned JSON lists of transfer ids into rows move every id, in order."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.soak]

BEFORE = [("wallets", "0004_finance_roles_indexes"), ("tournaments", "0001_initial"), ("api", None)]


def test_deal_and_reversal_transfer_ids_become_rows_in_order():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state([node for node in BEFORE if node[1]]).apps
    client = old.get_model("wallets", "ApiClient").objects.create(
        name="gs", key_prefix="p", key_hash="h", scopes=["games"]
    )
    Transfer = old.get_model("wallets", "Transfer")
    t1, t2, t3 = (
        Transfer.objects.create(
            kind="settlement", reference="game:1", idempotency_key=f"k{n}", content_hash="x"
        )
        for n in range(3)
    )
    escrow = old.get_model("wallets", "Account").objects.create(
        kind="escrow", code="escrow:1:g", balance=0, balance_currency="INR"
    )
    template = old.get_model("tournaments", "GameTemplate").objects.create(
        slug="p", format="points", point_value=2
    )
    game = old.get_model("tournaments", "Game").objects.create(
        client=client, game_id="g", template=template, escrow=escrow, format="points",
        currency="INR", terms={},
    )  # fmt: skip
    deal = old.get_model("tournaments", "Deal").objects.create(
        game=game, deal_no=1, results=[], payload_hash="h", transfers=[t3.pk, t1.pk]
    )
    user = old.get_model("auth", "User").objects.create(username="op")
    reversal = old.get_model("wallets", "Reversal").objects.create(
        reference="game:1", reason="r", proposed_by=user,
        transfer_ids=[t1.pk, t3.pk], posted_transfer_ids=[t2.pk],
    )  # fmt: skip

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    from tournaments.models import Deal
    from wallets.models import Reversal

    assert [link.transfer_id for link in Deal.objects.get(pk=deal.pk).transfer_links.all()] == [
        t3.pk,
        t1.pk,
    ]
    moved = Reversal.objects.get(pk=reversal.pk)
    assert moved.transfer_ids == [t1.pk, t3.pk]
    assert moved.posted_transfer_ids == [t2.pk]


def test_games_reversed_before_the_reversed_status_existed_say_so():
    before = [("tournaments", "0002_deal_transfers")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    client = old.get_model("wallets", "ApiClient").objects.create(
        name="gs", key_prefix="p", key_hash="h", scopes=["games"]
    )
    template = old.get_model("tournaments", "GameTemplate").objects.create(
        slug="p", format="points", point_value=2
    )
    Account = old.get_model("wallets", "Account")
    Game = old.get_model("tournaments", "Game")
    reversed_game, kept_game = (
        Game.objects.create(
            client=client,
            game_id=name,
            template=template,
            format="points",
            currency="INR",
            terms={},
            status="finished",
            escrow=Account.objects.create(kind="escrow", code=f"escrow:1:{name}", balance=0),
        )
        for name in ("reversed", "kept")
    )
    user = old.get_model("auth", "User").objects.create(username="op")
    Reversal = old.get_model("wallets", "Reversal")
    Reversal.objects.create(
        reference=f"game:{reversed_game.pk}", reason="r", proposed_by=user, status="approved"
    )
    Reversal.objects.create(
        reference=f"game:{kept_game.pk}", reason="r", proposed_by=user, status="rejected"
    )

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    from tournaments.models import Game as Current

    statuses = dict(Current.objects.values_list("game_id", "status"))
    assert statuses == {"reversed": "reversed", "kept": "finished"}


def _before_owners():
    """The database as migration 0009 left it, with three payments clients' history."""
    before = [("wallets", "0009_bonus_protection"), ("api", "0001_initial")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    return executor.loader.project_state(before).apps


def _withdrawal(old, player, reference: str):
    return old.get_model("wallets", "Withdrawal").objects.create(
        player=player, reference=reference, amount=10, net_winnings=0, taxed_net_winnings=0,
        tds=0, payout=10, pan="ABCDE1234F", needs_approval=False,
    )  # fmt: skip


def _deposit(old, reference: str):
    return old.get_model("wallets", "Transfer").objects.create(
        kind="deposit", reference=reference, idempotency_key=f"deposit:{reference}",
        content_hash="x",
    )  # fmt: skip


def _migrate_to_the_end():
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def test_deposits_and_withdrawals_get_the_client_their_idempotency_record_names():
    old = _before_owners()
    ApiClient = old.get_model("wallets", "ApiClient")
    gateways = [
        ApiClient.objects.create(name=f"gw{n}", key_prefix=f"p{n}", key_hash="h",
                                 scopes=["payments"])
        for n in range(2)
    ]  # fmt: skip
    player = old.get_model("wallets", "Player").objects.create(external_id="p")
    traced, untraced = _withdrawal(old, player, "wd-1"), _withdrawal(old, player, "wd-2")
    deposit, legacy = _deposit(old, "dep-1"), _deposit(old, "dep-2")
    Record = old.get_model("api", "IdempotencyRecord")
    Record.objects.create(
        client=gateways[1], key="k1", request_hash="h", status_code=201,
        response={"withdrawal_id": traced.pk, "net_winnings": "0.00"},
    )  # fmt: skip
    Record.objects.create(
        client=gateways[0], key="k2", request_hash="h", status_code=201,
        response={"transfer_id": deposit.pk, "credited": "1.00"},
    )  # fmt: skip
    # a replay answered to another client (the bug) does not make it the owner
    Record.objects.create(
        client=gateways[1], key="k3", request_hash="h", status_code=200,
        response={"transfer_id": deposit.pk, "credited": "1.00"},
    )  # fmt: skip

    _migrate_to_the_end()

    from wallets.models import GatewayDeposit, Withdrawal

    owners = dict(Withdrawal.objects.values_list("reference", "client__name"))
    assert owners == {"wd-1": "gw1", "wd-2": None}  # two payments clients: no guess
    deposits = dict(GatewayDeposit.objects.values_list("reference", "client__name"))
    assert deposits == {"dep-1": "gw0", "dep-2": None}
    assert GatewayDeposit.objects.get(reference="dep-2").transfer_id == legacy.pk
    assert untraced.pk


def test_with_one_payments_client_ever_the_untraced_rows_are_its():
    old = _before_owners()
    ApiClient = old.get_model("wallets", "ApiClient")
    ApiClient.objects.create(name="games", key_prefix="g", key_hash="h", scopes=["games"])
    ApiClient.objects.create(name="gw", key_prefix="p", key_hash="h", scopes=["payments"])
    player = old.get_model("wallets", "Player").objects.create(external_id="p")
    _withdrawal(old, player, "wd-1")
    _deposit(old, "dep-1")
    # a database from before the move: the clients' permissions are the ledger app's
    ContentType = old.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(model="apiclient").delete()  # and their permissions
    ledger_clients = ContentType.objects.create(app_label="wallets", model="apiclient")
    stale_permission = old.get_model("auth", "Permission").objects.create(
        codename="add_apiclient", name="Can add api client", content_type=ledger_clients
    )

    _migrate_to_the_end()

    from wallets.models import GatewayDeposit, Withdrawal

    assert Withdrawal.objects.get().client.name == "gw"
    assert GatewayDeposit.objects.get().client.name == "gw"
    # the client left the ledger app (api 0003): its rows, and its permissions with it
    from django.contrib.auth.models import Permission

    from rummy_ledger.api.models import ApiClient as MovedClient

    assert sorted(MovedClient.objects.values_list("name", flat=True)) == ["games", "gw"]
    assert Permission.objects.get(codename="add_apiclient").content_type.app_label == "api"
    assert Permission.objects.get(codename="add_apiclient").pk == stale_permission.pk
