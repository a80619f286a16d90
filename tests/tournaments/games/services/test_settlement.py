"""`settlement`: the body of the settle tasks. Stored deals are settled in deal order, with
their money and standings, once however often it runs; a deal settled meanwhile is skipped under
the game's lock; SETTLEMENT_BATCH games share a transaction and one ledger call; a game locked
elsewhere is skipped (and asked for again) and one bad deal holds up no one else's."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import transaction
from django.utils import timezone

from rummy_ledger.errors import Retryable
from tests.builders import books_balance_for, escrow_balance
from tests.concurrency import run_in_threads
from tests.tournaments.games.services.tables import (
    POINTS,
    POOL,
    opened,
    points_deal,
    pool_deal,
    stored,
    while_held,
)
from tests.wallets.invariants import ledger_violations
from tournaments.errors import GameBusy
from tournaments.games.services import settlement
from tournaments.games.services.games import game_get
from tournaments.models import Deal, DealTransfer, Game
from tournaments.payouts import Settlement, cancel_settlement
from wallets.errors import LedgerBusy
from wallets.models import Transfer
from wallets.money.amounts import ZERO


def _points_games(client, count: int) -> list[Deal]:
    """`count` two-player points games g0, g1, ..., each with its deal stored, oldest first."""
    return [
        stored(opened(client, f"g{n}", POINTS, (f"a{n}", f"b{n}")), points_deal(f"a{n}", f"b{n}"))
        for n in range(count)
    ]


def _status(*deals: Deal) -> list[str]:
    return [Deal.objects.get(pk=d.pk).status for d in deals]


def _spoiled(deal: Deal) -> None:
    """A stored deal the engine cannot score (an outcome that is none)."""
    Deal.objects.filter(pk=deal.pk).update(results=[{"player": "x", "outcome": "nonsense"}])


@pytest.mark.django_db
def test_a_stored_deal_is_settled_with_its_money_and_standings(server_client):
    # given a points game with its deal stored: b lost 22 points
    [deal] = _points_games(server_client, 1)

    # when
    settled = settlement.deal_settle(deal_id=deal.pk)

    # then the deal is settled with its points, the game finished and its escrow emptied
    assert settled == 1
    deal.refresh_from_db()
    assert deal.status == Deal.Status.SETTLED and deal.points == {"a0": 0, "b0": 22}
    game = Game.objects.get(pk=deal.game_id)
    assert (game.status, game.outcome, game.deals_played) == (Game.Status.FINISHED, "won", 1)
    assert (game.paid_out, game.fee, game.refunded) == (
        Decimal("19.80"), Decimal("2.20"), Decimal("138.00")
    )  # fmt: skip
    linked = DealTransfer.objects.filter(deal=deal).order_by("pk")
    assert [link.transfer.kind for link in linked] == ["settlement", "refund"]
    books_balance_for(game)
    assert ledger_violations() == []


@pytest.mark.django_db
def test_settling_again_settles_nothing_more(server_client):
    # given a deal settled
    [deal] = _points_games(server_client, 1)
    settlement.deal_settle(deal_id=deal.pk)
    transfers = Transfer.objects.count()

    # when its task runs again, alone or with its batch
    again = settlement.deal_settle(deal_id=deal.pk), settlement.deals_settle(deal_ids=[deal.pk])

    # then nothing is settled or paid twice
    assert again == (0, 0)
    assert Transfer.objects.count() == transfers
    assert DealTransfer.objects.count() == 2


@pytest.mark.django_db
def test_a_deal_settled_meanwhile_is_skipped_under_the_lock(server_client, monkeypatch):
    # given a deal settled by another run after this one read it as stored
    [deal] = _points_games(server_client, 1)
    settlement.deal_settle(deal_id=deal.pk)
    transfers = Transfer.objects.count()
    monkeypatch.setattr(settlement, "deal_is_stored", lambda deal_id: True)  # the stale read

    # when
    settled = settlement.deal_settle(deal_id=deal.pk)

    # then under the game's lock it finds nothing stored: nothing settled, nothing posted
    assert settled == 0
    assert Transfer.objects.count() == transfers
    assert Game.objects.get(pk=deal.game_id).deals_played == 1


@pytest.mark.django_db
def test_a_games_stored_deals_are_settled_in_deal_order(server_client, monkeypatch):
    # given a pool game whose deal 2 was stored before its deal 1 (ids in the other order)
    game = opened(server_client, "pool", POOL, ("x", "y"))
    second = stored(game, pool_deal(2, "x", "y"))
    first = stored(game, pool_deal(1, "x", "y"))
    scored, score = [], settlement._score

    def recording(game, seats, accounts, deal, fee_id):
        scored.append(deal.deal_no)
        return score(game, seats, accounts, deal, fee_id)

    monkeypatch.setattr(settlement, "_score", recording)

    # when the task of deal 2 runs
    settled = settlement.deal_settle(deal_id=second.pk)

    # then deal 1 is scored first, and after both y is out (160 points): x wins the pool
    assert settled == 2 and scored == [1, 2]
    assert _status(first, second) == [Deal.Status.SETTLED] * 2
    game.refresh_from_db()
    assert (game.status, game.deals_played) == (Game.Status.FINISHED, 2)
    assert (game.paid_out, game.fee) == (Decimal("180.00"), Decimal("20.00"))
    books_balance_for(game)


@pytest.mark.django_db
def test_a_deal_settles_its_game_with_others_up_to_the_batch(server_client, settings):
    # given three games with a deal stored each, two games a transaction
    settings.SETTLEMENT_BATCH = 2
    mine, oldest_other, newest = _points_games(server_client, 3)

    # when the task of the first one's deal runs
    settled = settlement.deal_settle(deal_id=mine.pk)

    # then it settled its own game and the one with the oldest deal waiting: two, not three
    assert settled == 2
    assert _status(mine, oldest_other, newest) == ["settled", "settled", "stored"]


@pytest.mark.django_db
def test_a_batchs_games_settle_batch_by_batch_with_one_ledger_call_each(
    server_client, settings, monkeypatch
):
    # given a batch of deals of three games, two games a transaction
    settings.SETTLEMENT_BATCH = 2
    deals = _points_games(server_client, 3)
    calls, post = [], settlement.release_post

    def counting(release):
        calls.append(len(release.requests))
        return post(release)

    monkeypatch.setattr(settlement, "release_post", counting)

    # when
    settled = settlement.deals_settle(deal_ids=[d.pk for d in deals])

    # then two transactions, each one ledger call: two games' transfers, then one game's
    assert settled == 3
    assert calls == [4, 2]
    assert _status(*deals) == [Deal.Status.SETTLED] * 3
    assert ledger_violations() == []


@pytest.mark.django_db
def test_one_bad_deal_does_not_hold_up_the_others_of_a_batch(server_client):
    # given a batch of three games' deals, the middle one not scorable
    good, bad, also_good = _points_games(server_client, 3)
    _spoiled(bad)

    # when
    settled = settlement.deals_settle(deal_ids=[good.pk, bad.pk, also_good.pk])

    # then the others are settled; the bad one stays stored, its game open and untouched
    assert settled == 2
    assert _status(good, bad, also_good) == ["settled", "stored", "settled"]
    bad_game = Game.objects.get(pk=bad.game_id)
    assert bad_game.status == Game.Status.OPEN and escrow_balance(bad_game) == Decimal("160.00")
    assert ledger_violations() == []


@pytest.mark.django_db
def test_a_bad_deal_of_another_game_does_not_hold_up_a_deals_own(server_client):
    # given my deal and a bad one of another game, older, that the batch takes along
    bad, mine = _points_games(server_client, 2)
    _spoiled(bad)

    # when
    settled = settlement.deal_settle(deal_id=mine.pk)

    # then mine is settled on its own after the batch failed; the bad one stays stored
    assert settled == 1
    assert _status(mine, bad) == ["settled", "stored"]
    books_balance_for(Game.objects.get(pk=mine.game_id))


@pytest.mark.django_db
def test_a_deal_that_cannot_be_scored_fails_its_task_and_stays_stored(server_client):
    # given my deal not scorable, and another game's deal that the batch would take along
    mine, other = _points_games(server_client, 2)
    _spoiled(mine)
    transfers = Transfer.objects.count()

    # when its task runs, the failure is raised (logged by Celery; finance sees the deal)
    with pytest.raises(KeyError):  # the engine cannot read the spoiled results
        settlement.deal_settle(deal_id=mine.pk)

    # then nothing of the failed transaction stays: both deals stored, no money moved
    assert _status(mine, other) == ["stored", "stored"]
    assert Transfer.objects.count() == transfers


@pytest.mark.django_db
def test_a_busy_ledger_is_handed_back_for_a_retry_not_taken_for_a_bad_deal(
    server_client, monkeypatch
):
    # given a batch of two games' deals, and a ledger whose locks are busy
    deals = _points_games(server_client, 2)

    def busy(release):
        raise LedgerBusy("lock timeout")

    monkeypatch.setattr(settlement, "release_post", busy)

    # when
    with pytest.raises(LedgerBusy):
        settlement.deals_settle(deal_ids=[d.pk for d in deals])

    # then the task is retried (LedgerBusy is Retryable), no game settled apart: all stored
    assert _status(*deals) == ["stored", "stored"]


@pytest.mark.django_db
def test_pending_settle_settles_a_locked_games_stored_deals(server_client):
    # given a pool game with a deal stored
    game = opened(server_client, "pool", POOL, ("x", "y"))
    deal = stored(game, pool_deal(1, "x", "y"))

    # when its lock holder settles what waits
    with transaction.atomic():
        locked = game_get(client=server_client, game_id="pool", lock=True)
        settled = settlement.pending_settle(game=locked)

    # then the deal is settled and the standings moved on; the game goes on
    assert settled == 1 and _status(deal) == ["settled"]
    game.refresh_from_db()
    assert (game.status, game.deals_played) == (Game.Status.OPEN, 1)
    assert list(game.players.order_by("seat").values_list("score", flat=True)) == [0, 80]


@pytest.mark.django_db
def test_unsettled_deal_ids_are_the_stored_deals_older_than_the_age(server_client, settings):
    # given an old stored deal, a newer one, and an old one already settled (on its own)
    settings.SETTLEMENT_BATCH = 1
    old, new, settled = _points_games(server_client, 3)
    settlement.deal_settle(deal_id=settled.pk)
    an_hour_ago = timezone.now() - timedelta(hours=1)
    Deal.objects.filter(pk__in=[old.pk, settled.pk]).update(created_at=an_hour_ago)

    # then only the old stored deal counts as waiting too long
    assert settlement.unsettled_deal_ids(older_than=timedelta(minutes=5)) == [old.pk]
    assert settlement.unsettled_deal_ids(older_than=timedelta(0)) == [old.pk, new.pk]


@pytest.mark.django_db
def test_game_finish_empties_the_escrow_and_closes_the_game(server_client):
    # given an open pool game holding 200.00
    game = opened(server_client, "pool", POOL, ("x", "y"))

    # when it is cancelled: everyone gets back what they paid in
    with transaction.atomic():
        locked = game_get(client=server_client, game_id="pool", lock=True)
        paid = {"x": Decimal("100.00"), "y": Decimal("100.00")}
        result = cancel_settlement(contributed=paid)
        transfers = settlement.game_finish(
            game=locked, result=result, outcome="cancelled", status=Game.Status.CANCELLED
        )

    # then one refund transfer emptied the escrow and the game is closed
    assert [t.kind for t in Transfer.objects.filter(pk__in=transfers)] == ["refund"]
    game.refresh_from_db()
    assert (game.status, game.outcome, game.refunded) == ("cancelled", "cancelled", 200)
    assert escrow_balance(game) == ZERO
    books_balance_for(game)


@pytest.mark.django_db
def test_game_finish_refuses_a_result_that_does_not_add_up(server_client):
    # given an open pool game holding 200.00, and a result paying out 199.99
    game = opened(server_client, "pool", POOL, ("x", "y"))
    transfers = Transfer.objects.count()
    short = Settlement(payouts={"x": Decimal("179.99")}, fee=Decimal("20.00"))

    # when
    with pytest.raises(AssertionError, match="does not add up"):
        settlement.game_finish(game=game, result=short, outcome="won")

    # then nothing moved and the game is still open
    assert Transfer.objects.count() == transfers
    assert escrow_balance(game) == Decimal("200.00")
    assert Game.objects.get(pk=game.pk).status == Game.Status.OPEN


# --- real concurrent connections ----------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_deal_whose_game_is_locked_elsewhere_is_busy_after_the_other_work(server_client):
    # given two games with a deal stored each, the first game's row locked by another connection
    mine, other = _points_games(server_client, 2)

    # when the task of the first game's deal runs meanwhile
    outcome = while_held(
        lambda: Game.objects.select_for_update().get(pk=mine.game_id),
        lambda: settlement.deal_settle(deal_id=mine.pk),
    )

    # then it did not wait: it settled the other game and asks to be run again for its own
    assert isinstance(outcome, GameBusy)
    assert _status(mine, other) == ["stored", "settled"]
    assert settlement.deal_settle(deal_id=mine.pk) == 1  # once the lock is gone
    assert ledger_violations() == []


@pytest.mark.django_db(transaction=True)
def test_a_batch_whose_game_is_locked_elsewhere_is_busy_after_the_others(server_client):
    # given a batch of two games' deals, the first game's row locked by another connection
    mine, other = _points_games(server_client, 2)

    # when
    outcome = while_held(
        lambda: Game.objects.select_for_update().get(pk=mine.game_id),
        lambda: settlement.deals_settle(deal_ids=[mine.pk, other.pk]),
    )

    # then the other game is settled; the batch asks to be run again for the locked one
    assert isinstance(outcome, GameBusy)
    assert _status(mine, other) == ["stored", "settled"]
    assert settlement.deals_settle(deal_ids=[mine.pk, other.pk]) == 1
    assert ledger_violations() == []


@pytest.mark.django_db(transaction=True)
def test_the_same_deal_settled_on_four_connections_at_once_settles_once(server_client):
    # given one stored deal
    [deal] = _points_games(server_client, 1)

    # when four tasks settle it at the same moment
    outcomes = run_in_threads(lambda n: settlement.deal_settle(deal_id=deal.pk), 4)

    # then one settled it; the others found it settled or its game busy (and would retry)
    assert [o for o in outcomes if o == 1] == [1]
    assert all(o in (0, 1) or isinstance(o, Retryable) for o in outcomes), outcomes
    assert _status(deal) == ["settled"]
    assert Transfer.objects.filter(kind=Transfer.Kind.SETTLEMENT).count() == 1
    books_balance_for(Game.objects.get(pk=deal.game_id))
    assert ledger_violations() == []
