"""Settlement by a REAL Celery worker process over the real broker and database, including a
worker SIGKILLed in the middle of a settlement."""

from decimal import Decimal

import pytest
from django.db import connection

from tests.builders import (
    LOSER_22,
    LOSER_50,
    WINNER,
    Server,
    books_balance_for,
    funded_player,
    res,
    template,
)
from tests.tournaments.worker import Worker, private_queue, wait_until
from tests.wallets.invariants import ledger_violations
from tournaments.models import Deal, Game
from tournaments.tasks import settle_waiting
from wallets.models import Transfer

pytestmark = pytest.mark.django_db(transaction=True)


def all_settled() -> bool:
    return not Deal.objects.filter(status=Deal.Status.STORED).exists()


def open_points_games(server: Server, n: int) -> list[str]:
    template("points-1", "points", point_value=Decimal("1.00"), fee_percent=Decimal("12.5"))
    ids = []
    for g in range(n):
        players = [f"g{g}p{i}" for i in range(3)]
        for p in players:
            funded_player(p, "100.00")
        assert server.open(f"game-{g}", "points-1", players).status_code == 201
        ids.append(f"game-{g}")
    return ids


def post_points_deal(server: Server, game_id: str) -> None:
    g = game_id.split("-")[1]
    r = server.deal(
        game_id,
        1,
        [
            res(f"g{g}p0", "declared", WINNER),
            res(f"g{g}p1", "lost", LOSER_22),
            res(f"g{g}p2", "lost", LOSER_50),
        ],
    )
    assert r.status_code == 202, r.json()


def test_real_worker_settles_games_posted_over_the_api():
    server = Server()
    with private_queue() as queue:
        worker = Worker(queue)
        try:
            games = open_points_games(server, 4)
            template("pool-101", "pool101", entry_fee=Decimal("10.00"))
            for p in ("x", "y"):
                funded_player(p, "50.00")
            server.open("pool", "pool-101", ["x", "y"])
            for game_id in games:
                post_points_deal(server, game_id)
            for n in (1, 2):
                server.deal("pool", n, [res("x", "declared", WINNER), res("y", "wrong_show")])
            assert wait_until(all_settled, timeout=60), "deals not settled by the worker"
        finally:
            worker.stop()
    for game in Game.objects.all():
        assert game.status == Game.Status.FINISHED
        books_balance_for(game)
    assert server.get("games/game-0").json()["paid_out"] == "63.00"  # 72 - 12.5% = 63
    assert ledger_violations() == []


VALID_TOO = [["10S", "JS", "QS"], ["5H", "6H", "7H", "8H"], ["2D", "2C", "2H"], ["9D", "9C", "9H"]]


def test_real_worker_settles_forfeits_valid_losers_and_a_drop_value_split():
    # A deal won without a show, a valid losing hand, the points cap: posted over the API and
    # settled by a real worker.
    server = Server()
    template("points-2", "points", point_value=Decimal("2.00"), fee_percent=Decimal("10"))
    template("pool-dv", "pool101", entry_fee=Decimal("20.00"), split_policy="drop_value")
    for p in ("a", "b", "c", "d", "e", "w", "x", "y", "z"):
        funded_player(p, "200.00")
    with private_queue() as queue:
        worker = Worker(queue)
        try:
            server.open("forfeit", "points-2", ["a", "b"])
            r = server.deal("forfeit", 1, [res("a", "wrong_show"), res("b", "declared")])
            assert r.status_code == 202, r.json()
            server.open("valid", "points-2", ["c", "d", "e"])
            r = server.deal(
                "valid",
                1,
                [
                    res("c", "declared", WINNER),
                    res("d", "lost", WINNER),
                    res("e", "first_drop", VALID_TOO),
                ],
            )
            assert r.status_code == 202, r.json()
            server.open("pool", "pool-dv", ["w", "x", "y", "z"])
            r = server.deal(
                "pool",
                1,
                [
                    res("w", "declared", WINNER),
                    res("x", "first_drop"),
                    res("y", "middle_drop"),
                    res("z", "lost", LOSER_22),
                ],
            )
            assert r.status_code == 202, r.json()
            assert wait_until(all_settled, timeout=60), "deals not settled by the worker"
            split = server.post("games/pool/split")
        finally:
            worker.stop()
    forfeit = server.get("games/forfeit").json()
    assert forfeit["paid_out"] == "144.00" and forfeit["fee"] == "16.00"  # 80 x 2 - 10 %
    valid = server.get("games/valid").json()
    # d's valid hand pays 2 (recorded as reclassified); e dropped: 20 whatever its cards
    assert valid["deals"][0]["points"] == {"c": 0, "d": 2, "e": 20}
    assert valid["deals"][0]["discrepancies"] == {
        "d": {"posted_outcome": "lost", "scored_outcome": "valid_second"}
    }
    assert valid["paid_out"] == "39.60"  # (4 + 40) - 10 %
    assert split.status_code == 200, split.json()
    assert [p["payout"] for p in split.json()["players"]] == ["43.00", "23.00", "3.00", "3.00"]
    for game in Game.objects.all():
        assert game.status == Game.Status.FINISHED
        books_balance_for(game)
    assert ledger_violations() == []


def _worker_in_transaction() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND state = 'idle in transaction' AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0] > 0


@pytest.mark.soak
def test_worker_killed_mid_settlement_settles_each_deal_exactly_once():
    server = Server()
    with private_queue() as queue:
        # given: a worker that sleeps inside the settlement transaction, after posting the money
        slow = Worker(queue, pause_in_settlement=30)
        try:
            games = open_points_games(server, 4)
            for game_id in games:
                post_points_deal(server, game_id)
            # when: it is killed in the middle of settling
            assert wait_until(_worker_in_transaction, timeout=30), "worker never started"
            assert Deal.objects.filter(status=Deal.Status.SETTLED).count() == 0
        finally:
            slow.kill()
        assert wait_until(lambda: not _worker_in_transaction(), timeout=10)
        assert Transfer.objects.filter(kind="settlement").count() == 0  # rolled back
        # then: a restarted worker, woken (by beat, here by hand), settles everything, once
        worker = Worker(queue)
        try:
            settle_waiting.delay()
            assert wait_until(all_settled, timeout=60), "deals not settled after restart"
            settle_waiting.delay()  # a second wake finds nothing to do
            for game_id in games:
                post_points_deal(server, game_id)  # a late repeat is the same deal
        finally:
            worker.stop()
    assert Deal.objects.count() == len(games)
    for game in Game.objects.all():
        assert game.status == Game.Status.FINISHED
        paid = Transfer.objects.filter(reference=f"game:{game.pk}").exclude(kind="entry")
        assert sorted(paid.values_list("idempotency_key", flat=True)) == [
            f"game:{game.pk}:refunds",
            f"game:{game.pk}:settlement",
        ]
        books_balance_for(game)
    assert ledger_violations() == []
