"""Chip dumping, over real HTTP: a player losing small on purpose to a partner,
game after game or tournament after tournament, loses bonus only in the share the entry's cap
allows, and the one-way-flow report flags the pair for finance, whichever way the money went."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.utils import timezone

from tests.builders import HttpApi, bonus_granted, funded_player, template
from tests.tournaments.tournament_builders import Lobby, scheduled
from tests.tournaments.tournament_builders import table as standings
from tests.wallets.invariants import ledger_violations
from tournaments.models import Game
from wallets.models import BonusLot, FlaggedPair, FlowReport
from wallets.reconciliation import reconcile_run
from wallets.selectors import player_by_external_id, wallet_balances
from wallets.services.flows import flow_report_run
from wallets.tasks import flow_report as flow_report_task

pytestmark = pytest.mark.django_db(transaction=True)

D = Decimal


@pytest.fixture
def table(live_server, eager):
    """A game server over HTTP at a 2-player cash points table (₹1 a point: 80 in escrow, at
    most 8 of it from bonus)."""
    template("points-1", "points", point_value=D("1.00"))
    api = HttpApi(live_server.url, "games", name="game-server")

    def post(path: str, body: dict) -> None:
        response = api.post(path, body)
        assert response.status_code < 300, response.text

    def play(game_id: str, loser: str, winner: str) -> None:
        """`loser` drops at once (20 points) and `winner` takes the deal without a show."""
        post("games", {"game_id": game_id, "template": "points-1", "players": [loser, winner]})
        results = [
            {"player": loser, "outcome": "first_drop"},
            {"player": winner, "outcome": "declared"},
        ]
        post(f"games/{game_id}/deals", {"deal_no": 1, "wild_joker": "5D", "results": results})

    return play


def _bucket(player: str, bucket: str) -> Decimal:
    balances = wallet_balances(player=player_by_external_id(player))
    return D(balances[bucket]["amount"])


def test_losing_on_purpose_moves_bonus_only_in_the_entrys_cap_share(table):
    funded_player("dumper", "300.00")
    bonus_granted("dumper", "100.00")
    funded_player("partner", "100.00")

    for n in range(5):
        table(f"dump-{n}", loser="dumper", winner="partner")

    # five losses of 20: 100 lost, of which 10 % (2 a game) from bonus; the entry took 8 of
    # bonus every time and used to lose all of it (40), deposit coming back first
    assert _bucket("dumper", "bonus") == D("90.00")
    assert _bucket("dumper", "deposit") == D("210.00")
    assert _bucket("partner", "winnings") == D("90.00")  # 100 won, 10 % fee
    lots = BonusLot.objects.filter(player__external_id="dumper")
    assert sum(lot.remaining for lot in lots) == D("90.00")  # the lots follow the bucket
    assert ledger_violations() == []
    assert reconcile_run(trigger="command").status == "clean"


def test_the_flow_report_flags_the_pair_and_stores_its_report(table, capsys):
    funded_player("dumper", "300.00")
    funded_player("partner", "100.00")
    for n in range(5):
        table(f"dump-{n}", loser="dumper", winner="partner")

    call_command("flow_report")

    report = FlowReport.objects.get()
    assert (report.trigger, report.pairs_looked_at) == ("command", 1)
    pair = report.pairs.get()
    assert (pair.loser.external_id, pair.winner.external_id) == ("dumper", "partner")
    assert (pair.games, pair.amount, pair.returned) == (5, D("100.00"), D("0.00"))
    assert "dumper -> partner: 100.00 INR in 5 games, 0.00 back" in capsys.readouterr().out


def test_players_who_win_and_lose_to_each_other_are_not_flagged(table, settings):
    settings.FLOW_REPORT_MIN_GAMES = 2
    funded_player("a", "300.00")
    funded_player("b", "300.00")
    for n in range(6):
        loser, winner = ("a", "b") if n % 2 else ("b", "a")
        table(f"fair-{n}", loser=loser, winner=winner)

    report = flow_report_run(trigger="command")

    assert report.pairs_looked_at == 2 and not FlaggedPair.objects.exists()


def test_the_thresholds_are_settings(table, settings):
    funded_player("dumper", "300.00")
    funded_player("partner", "100.00")
    for n in range(5):
        table(f"dump-{n}", loser="dumper", winner="partner")

    settings.FLOW_REPORT_MIN_GAMES = 6
    assert not flow_report_run(trigger="command").pairs.exists()
    settings.FLOW_REPORT_MIN_GAMES, settings.FLOW_REPORT_MIN_AMOUNT = 5, D("100.01")
    assert not flow_report_run(trigger="command").pairs.exists()
    settings.FLOW_REPORT_MIN_AMOUNT = D("100.00")
    report = flow_report_run(trigger="command")
    assert report.pairs.count() == 1
    assert report.thresholds == {
        "window_days": 30,
        "min_games": 5,
        "min_amount": "100.00",
        "max_return_percent": "10",
    }


def test_games_before_the_window_are_not_looked_at_and_beat_runs_the_report(table, settings):
    funded_player("dumper", "300.00")
    funded_player("partner", "100.00")
    for n in range(5):
        table(f"dump-{n}", loser="dumper", winner="partner")
    days = settings.FLOW_REPORT_WINDOW_DAYS
    Game.objects.update(finished_at=timezone.now() - timedelta(days=days, minutes=1))

    report = FlowReport.objects.get(pk=flow_report_task())

    assert settings.CELERY_BEAT_SCHEDULE["wallets-flow-report"]["task"] == flow_report_task.name
    assert (report.trigger, report.pairs_looked_at) == ("schedule", 0)
    assert not report.pairs.exists()


@pytest.fixture
def heads_up(live_server, eager):
    """A lobby over HTTP running heads-up ₹100 cash tournaments (no guarantee, all to the
    winner): `play(n, loser, winner)` schedules tournament n, registers both, plays its final."""
    lobby = Lobby(live_server.url)

    def play(n: int, loser: str, winner: str) -> None:
        slug = f"heads-up-{n}"
        scheduled(slug=slug, name=f"Heads-up {n}", guarantee="0.00", min_players=2,
                  max_players=2, table_size=2, rounds=[{"final": True}], rebuy=None,
                  prizes=[{"ranks": "1", "percent": "100.00"}])  # fmt: skip
        for player in (loser, winner):
            assert lobby.register(slug, player)[0] == 201
        assert lobby.start(slug)[0] == 200
        final = [standings("F", (winner, 1, 2000), (loser, 2, 0))]
        assert lobby.round(slug, 1, final)[0] == 202
        assert lobby.get(slug)[1]["status"] == "finished"

    return play


def test_losing_heads_up_tournaments_on_purpose_is_flagged_like_games(heads_up):
    funded_player("dumper", "600.00")
    funded_player("partner", "100.00")
    for n in range(6):
        heads_up(n, loser="dumper", winner="partner")

    report = flow_report_run(trigger="command")

    pair = report.pairs.get()
    assert (pair.loser.external_id, pair.winner.external_id) == ("dumper", "partner")
    # each: the dumper's 100 lost to the partner, who took the pool of 170 (15 % fee)
    assert (pair.games, pair.amount, pair.returned) == (6, D("600.00"), D("0.00"))
    assert _bucket("dumper", "deposit") == D("0.00")
    assert _bucket("partner", "winnings") == 6 * D("170.00") - 5 * D("100.00")  # entries 2-6


def test_a_pair_dumping_through_games_and_tournaments_is_one_pair(table, heads_up):
    funded_player("dumper", "600.00")
    funded_player("partner", "100.00")
    for n in range(3):  # neither way alone reaches the 5 games of FLOW_REPORT_MIN_GAMES
        table(f"dump-{n}", loser="dumper", winner="partner")
        heads_up(n, loser="dumper", winner="partner")
    table("back", loser="partner", winner="dumper")  # once the other way: 20

    report = flow_report_run(trigger="command")

    pair = report.pairs.get()
    assert (pair.loser.external_id, pair.winner.external_id) == ("dumper", "partner")
    assert (pair.games, pair.amount, pair.returned) == (6, D("360.00"), D("20.00"))
    assert report.pairs_looked_at == 2
