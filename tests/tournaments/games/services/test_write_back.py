"""`settlement_write_back`: settlement's one write. Deals, the transfers they posted (in order),
seats and games go to the database in ONE statement, each value to its column; rows it is not
given stay as they were."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.tournaments.games.services.tables import POINTS, opened, points_deal, stored
from tournaments.games.services.write_back import settlement_write_back
from tournaments.models import Deal, DealTransfer, Game, GamePlayer
from tournaments.references import game_reference
from wallets.models import Transfer

pytestmark = pytest.mark.django_db


def _entry_transfers(game: Game) -> list[int]:
    """The game's entry transfers: real transfers for the deal to be linked to."""
    entries = Transfer.objects.filter(reference=game_reference(game.pk), kind=Transfer.Kind.ENTRY)
    return list(entries.order_by("pk").values_list("pk", flat=True))


def test_deals_links_seats_and_games_are_written_in_one_statement(server_client):
    # given a points game with its deal stored, and what settling it decided, in memory
    game = opened(server_client, "g", POINTS, ("a", "b"))
    deal = stored(game, points_deal("a", "b"))
    seats = list(game.players.order_by("seat"))
    deal.points, deal.discrepancies = {"a": 0, "b": 22}, [{"player": "b", "claimed": 20}]
    seats[0].payout, seats[0].refund, seats[1].score = Decimal("19.80"), Decimal("80.00"), 22
    seats[1].eliminated, seats[1].refund = True, Decimal("58.00")
    finished = timezone.now()
    game.status, game.outcome, game.finished_at = Game.Status.FINISHED, "won", finished
    game.deals_played, game.paid_out, game.fee = 1, Decimal("19.80"), Decimal("2.20")
    game.refunded = Decimal("138.00")
    links = [(deal.pk, pk) for pk in _entry_transfers(game)]

    # when
    with CaptureQueriesContext(connection) as written:
        settlement_write_back([game], seats, [deal], links)

    # then one statement wrote every value to its column
    assert len(written.captured_queries) == 1
    deal.refresh_from_db()
    assert deal.status == Deal.Status.SETTLED and deal.settled_at is not None
    assert deal.points == {"a": 0, "b": 22}
    assert deal.discrepancies == [{"player": "b", "claimed": 20}]
    assert list(DealTransfer.objects.filter(deal=deal).values_list("transfer_id", flat=True)) == [
        pk for _, pk in links
    ]
    seated = GamePlayer.objects.filter(game=game).order_by("seat")
    assert list(seated.values_list("score", "eliminated", "payout", "refund")) == [
        (0, False, Decimal("19.80"), Decimal("80.00")),
        (22, True, 0, Decimal("58.00")),
    ]
    game.refresh_from_db()
    assert (game.status, game.outcome, game.finished_at, game.deals_played) == (
        Game.Status.FINISHED, "won", finished, 1
    )  # fmt: skip
    assert (game.paid_out, game.refunded, game.fee) == (
        Decimal("19.80"), Decimal("138.00"), Decimal("2.20")
    )  # fmt: skip


def test_the_links_keep_the_order_they_are_given_in(server_client):
    # given two transfers linked to a deal, the later one first
    game = opened(server_client, "g", POINTS, ("a", "b"))
    deal = stored(game, points_deal("a", "b"))
    first, second = _entry_transfers(game)

    # when
    settlement_write_back([game], [], [deal], [(deal.pk, second), (deal.pk, first)])

    # then the link rows are inserted in that order
    links = DealTransfer.objects.filter(deal=deal).order_by("pk")
    assert list(links.values_list("transfer_id", flat=True)) == [second, first]


def test_rows_not_given_are_left_as_they_were(server_client):
    # given two games with a stored deal each; only the first one's rows are written back
    mine = opened(server_client, "mine", POINTS, ("a", "b"))
    other = opened(server_client, "other", POINTS, ("c", "d"))
    deal, other_deal = stored(mine, points_deal("a", "b")), stored(other, points_deal("c", "d"))
    before = list(GamePlayer.objects.filter(game=other).values_list("score", "payout", "refund"))
    mine.deals_played = 1

    # when
    settlement_write_back([mine], [], [deal], [])

    # then the other game, its seats and its deal are untouched
    other_deal.refresh_from_db()
    assert other_deal.status == Deal.Status.STORED and other_deal.settled_at is None
    assert Game.objects.get(pk=other.pk).deals_played == 0
    after = list(GamePlayer.objects.filter(game=other).values_list("score", "payout", "refund"))
    assert after == before
    assert not DealTransfer.objects.exists()
    assert Game.objects.get(pk=mine.pk).deals_played == 1


def test_nothing_given_writes_nothing(server_client):
    # given a game with a stored deal
    game = opened(server_client, "g", POINTS, ("a", "b"))
    deal = stored(game, points_deal("a", "b"))

    # when the write-back is given nothing
    settlement_write_back([], [], [], [])

    # then nothing changed
    deal.refresh_from_db()
    assert deal.status == Deal.Status.STORED
    assert Game.objects.get(pk=game.pk).status == Game.Status.OPEN
    assert not DealTransfer.objects.exists()
