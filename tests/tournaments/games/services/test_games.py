"""`games`: a rejoin, a split and a cancel need the game's standings now, so each locks the game
and first settles its stored deals with the one settlement function (`settlement.games_settle`),
then acts on what they led to: the eliminated player rejoins, the remaining players share, the
escrow left goes back, or the game those deals finished refuses the change."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.builders import escrow_balance, template
from tests.tournaments.games.services.tables import POINTS, opened, points_deal, pool3_deal
from tests.tournaments.leaderboards.builders import board
from tournaments.errors import GameNotOpen
from tournaments.games.services import intake
from tournaments.games.services.games import game_cancel, game_rejoin, game_split
from tournaments.games.services.settlement import waiting_settle
from tournaments.models import Deal, Game, GamePlayer

POOL_PLAY = "pool-101-play"  # rejoin allowed, split equally


@pytest.fixture
def pool_play(db):
    template(POOL_PLAY, "pool101", rejoin_allowed=True, split_policy="equal")


def _stored(client, game_id: str, *deals: dict) -> None:
    for deal in deals:
        _, created = intake.deal_store(client=client, game_id=game_id, payload=deal)
        assert created


def _seats(game: Game) -> dict[str, tuple[int, bool, int]]:
    """Each player's score, whether out, and entries paid."""
    rows = GamePlayer.objects.filter(game=game)
    return {
        external_id: (score, eliminated, entries)
        for external_id, score, eliminated, entries in rows.values_list(
            "player__external_id", "score", "eliminated", "entries"
        )
    }


def _statuses(game: Game) -> set[str]:
    return set(Deal.objects.filter(game=game).values_list("status", flat=True))


@pytest.mark.django_db
def test_a_rejoin_settles_the_stored_deals_that_put_the_player_out_then_buys_back_in(
    server_client, pool_play
):
    # given a pool game whose stored deals 1 and 2 put y out (160); nothing is settled yet
    game = opened(server_client, "pool", POOL_PLAY, ("x", "y", "z"))
    _stored(server_client, "pool", pool3_deal(1), pool3_deal(2))
    assert _seats(game)["y"] == (0, False, 1)

    # when y rejoins
    rejoined = game_rejoin(client=server_client, game_id="pool", player="y")

    # then both deals were settled first (y out at 160), and y is back with one more entry
    # paid into the pool, at the highest remaining score plus one (z: 40)
    assert _statuses(game) == {Deal.Status.SETTLED}
    assert rejoined.deals_played == 2
    assert _seats(game) == {"x": (0, False, 1), "y": (41, False, 2), "z": (40, False, 1)}
    game.refresh_from_db()
    assert game.collected == Decimal("400.00")
    assert escrow_balance(game) == game.collected


@pytest.mark.django_db
def test_a_split_shares_the_pool_among_those_the_stored_deals_left(server_client, pool_play):
    # given a pool game whose stored deals put y out; x and z remain
    game = opened(server_client, "pool", POOL_PLAY, ("x", "y", "z"))
    _stored(server_client, "pool", pool3_deal(1), pool3_deal(2))

    by_fee = board(templates=[POOL_PLAY])

    # when the remaining players split
    game_split(client=server_client, game_id="pool")

    # then the deals were settled first, and x and z share the pool less the fee; y gets nothing
    game.refresh_from_db()
    assert _statuses(game) == {Deal.Status.SETTLED}
    assert game.status == Game.Status.FINISHED
    payouts = dict(
        GamePlayer.objects.filter(game=game).values_list("player__external_id", "payout")
    )
    assert payouts == {"x": Decimal("135.00"), "y": Decimal("0.00"), "z": Decimal("135.00")}
    assert escrow_balance(game) == 0
    # and it counts for the leaderboards as a settled game: x and z share its fee
    assert game.fee > 0
    shares = {"x": game.fee / 2, "z": game.fee / 2}
    assert dict(by_fee.points.values_list("player__external_id", "points")) == shares


@pytest.mark.django_db
def test_a_cancel_refunds_what_the_stored_deals_leave_in_escrow(server_client, pool_play):
    # given a pool game with one stored deal (nobody out yet)
    game = opened(server_client, "pool", POOL_PLAY, ("x", "y", "z"))
    _stored(server_client, "pool", pool3_deal(1))
    by_fee = board(templates=[POOL_PLAY])

    # when it is cancelled
    game_cancel(client=server_client, game_id="pool")

    # then the deal was settled first, and every entry goes back from the escrow
    game.refresh_from_db()
    assert _statuses(game) == {Deal.Status.SETTLED}
    assert (game.status, game.deals_played) == (Game.Status.CANCELLED, 1)
    refunds = dict(
        GamePlayer.objects.filter(game=game).values_list("player__external_id", "refund")
    )
    assert refunds == {p: Decimal("100.00") for p in ("x", "y", "z")}
    assert escrow_balance(game) == 0
    assert not by_fee.points.exists()  # a cancelled game counts for no leaderboard


@pytest.mark.django_db
def test_a_cancel_meets_the_game_its_stored_deal_finished(server_client):
    # given a points game whose one deal is stored: settling it finishes the game
    game = opened(server_client, "g", POINTS, ("a", "b"))
    _stored(server_client, "g", points_deal("a", "b"))

    # when it is cancelled
    with pytest.raises(GameNotOpen) as refused:
        game_cancel(client=server_client, game_id="g")

    # then the game is finished by its stored deal, and the refusal wrote nothing: the deal
    # settles as it would have, by the settlement queue
    assert refused.value.details == {"status": Game.Status.FINISHED}
    assert _statuses(game) == {Deal.Status.STORED}
    assert escrow_balance(game) == game.collected
    waiting_settle()
    game.refresh_from_db()
    assert (_statuses(game), game.status) == ({Deal.Status.SETTLED}, Game.Status.FINISHED)
    assert escrow_balance(game) == 0
