"""A leaderboard of a week over real HTTP with a real Celery worker: games opened and their
deals posted over HTTP, settled by the worker (the points with them), the standings read over
HTTP with ties sharing a rank; the week ends and the worker pays it once, ties sharing, though
the job is sent twice."""

import time
from decimal import Decimal

import pytest

from tests.builders import LOSER_22, LOSER_50, WINNER, funded_player, res, template
from tests.tournaments.leaderboards.builders import board, week_passes
from tests.tournaments.tournament_builders import Lobby
from tests.tournaments.worker import Worker, private_queue, wait_until
from tests.wallets.invariants import ledger_violations
from tournaments.models import Deal
from tournaments.tasks import leaderboards_pay
from wallets.models import Transfer
from wallets.reconciliation.runner import reconcile_run

pytestmark = pytest.mark.django_db(transaction=True)
D = Decimal


def winnings(player: str) -> Decimal:
    return funded_player(player, "0")["winnings"].balance.amount


def test_a_week_paid_once_ties_shared(live_server):
    lobby = Lobby(live_server.url)
    template("points-1", "points", point_value=D("1.00"), fee_percent=D("12.5"))
    week = board(client="lobby", templates=["points-1"], scoring="results")
    with private_queue() as queue:
        worker = Worker(queue)
        try:
            for g in range(2):
                players = [f"g{g}p{i}" for i in range(3)]
                for p in players:
                    funded_player(p, "100.00")
                body = {"game_id": f"game-{g}", "template": "points-1", "players": players}
                assert lobby.call("POST", "/games", body, base=lobby.root)[0] == 201
                results = [
                    res(players[0], "declared", WINNER),
                    res(players[1], "lost", LOSER_22),
                    res(players[2], "lost", LOSER_50),
                ]
                deal = {"deal_no": 1, "wild_joker": "KD", "results": results}
                status, answer = lobby.call("POST", f"/games/game-{g}/deals", deal, base=lobby.root)
                assert status == 202, answer
            assert wait_until(
                lambda: not Deal.objects.filter(status=Deal.Status.STORED).exists(), timeout=60
            )
            # the standings over HTTP: 72 won less the fee (63) / 100; 22 and 50 lost / 200
            status, body = lobby.call("GET", "/leaderboards/week-1", base=lobby.root)
            assert status == 200, body
            assert body["status"] == "running"
            assert [(s["rank"], s["player"], s["points"]) for s in body["standings"]] == [
                (1, "g0p0", "0.63"), (1, "g1p0", "0.63"), (3, "g0p2", "0.25"),
                (3, "g1p2", "0.25"), (5, "g0p1", "0.11"), (5, "g1p1", "0.11"),
            ]  # fmt: skip

            # the week ends; the job is sent twice
            week_passes(week)
            leaderboards_pay.delay()
            leaderboards_pay.delay()
            assert wait_until(
                lambda: (
                    lobby.call("GET", "/leaderboards/week-1", base=lobby.root)[1]["status"]
                    == "paid"
                ),
                timeout=60,
            )
            time.sleep(2)  # the second run too, before the worker stops
        finally:
            worker.stop()
    # ranks 1-2 share 1,000 + 500; ranks 3-4 share 100 + nothing
    assert [winnings(p) for p in ("g0p0", "g1p0", "g0p2", "g1p2", "g0p1", "g1p1")] == [
        D("63.00") + D("750.00"), D("63.00") + D("750.00"), D("50.00"), D("50.00"),
        D("0.00"), D("0.00"),
    ]  # fmt: skip
    assert Transfer.objects.filter(reference=f"leaderboard:{week.pk}").count() == 1
    assert ledger_violations() == []
    assert reconcile_run(trigger="command").status == "clean"
