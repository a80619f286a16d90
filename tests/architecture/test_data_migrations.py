"""The data migrations that turned JSON lists of transfer ids into rows move every id, in order."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

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
