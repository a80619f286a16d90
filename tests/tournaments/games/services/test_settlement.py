"""`settlement`: the stored deals are the queue of the settlement task. Stored deals are settled in
deal order, with their money and standings, once however often and on however many workers it
runs; games are claimed oldest deal first, SETTLEMENT_BATCH a transaction and one ledger call,
for a bounded run that wakes the next; a game locked elsewhere is skipped, not waited for; one
bad deal holds up no one else's and is not retried at every wake; a lost wake is made up by
beat's, a duplicate one settles nothing twice."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal

import pytest
from django.db import transaction
from django.db.models import Sum

from rummy_ledger.celery import app as celery_app
from rummy_ledger.events.event_types import EventType
from rummy_ledger.events.models import Event
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
from tournaments.games.services import settlement
from tournaments.games.services.games import game_get
from tournaments.models import Deal, DealTransfer, Game
from tournaments.payouts import Settlement, cancel_settlement
from tournaments.tasks import settle_waiting
from wallets.errors import LedgerBusy
from wallets.models import Entry, Transfer
from wallets.money.amounts import ZERO


def _points_games(client, count: int) -> list[Deal]:
    """`count` two-player points games g0, g1, ..., each with its deal stored, oldest first."""
    return [
        stored(opened(client, f"g{n}", POINTS, (f"a{n}", f"b{n}")), points_deal(f"a{n}", f"b{n}"))
        for n in range(count)
    ]


def _status(*deals: Deal) -> list[str]:
    return [Deal.objects.get(pk=d.pk).status for d in deals]


@pytest.fixture(autouse=True)
def _no_game_failing():
    """A test starts with no game left alone after a failure (`settlement.Failing`)."""
    settlement._failing = settlement.Failing()
    yield
    settlement._failing = settlement.Failing()


def _spoiled(deal: Deal) -> None:
    """A stored deal the engine cannot score (an outcome that is none)."""
    Deal.objects.filter(pk=deal.pk).update(results=[{"player": "x", "outcome": "nonsense"}])


def _points_games_named(client, prefix: str) -> list[Deal]:
    return [stored(opened(client, prefix, POINTS, ("p", "q")), points_deal("p", "q"))]


@pytest.mark.django_db
def test_a_stored_deal_is_settled_with_its_money_and_standings(server_client):
    # given a points game with its deal stored: b lost 22 points
    [deal] = _points_games(server_client, 1)

    # when
    more = settlement.waiting_settle()

    # then the deal is settled with its points, the game finished and its escrow emptied
    assert more is False  # nothing was left for another run
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
    settlement.waiting_settle()
    transfers = Transfer.objects.count()

    # when the settlement runs again (a duplicated wake)
    settlement.waiting_settle()

    # then nothing is settled or paid twice
    assert Transfer.objects.count() == transfers
    assert DealTransfer.objects.count() == 2
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

    # when
    settlement.waiting_settle()

    # then deal 1 is scored first, and after both y is out (160 points): x wins the pool
    assert scored == [1, 2]
    assert _status(first, second) == [Deal.Status.SETTLED] * 2
    game.refresh_from_db()
    assert (game.status, game.deals_played) == (Game.Status.FINISHED, 2)
    assert (game.paid_out, game.fee) == (Decimal("180.00"), Decimal("20.00"))
    books_balance_for(game)


@pytest.mark.django_db
def test_games_are_claimed_batch_by_batch_with_one_ledger_call_each(
    server_client, settings, monkeypatch
):
    # given three games with a deal stored each, two games a transaction
    settings.SETTLEMENT_BATCH = 2
    deals = _points_games(server_client, 3)
    calls, post = [], settlement.release_post

    def counting(release):
        calls.append(len(release.requests))
        return post(release)

    monkeypatch.setattr(settlement, "release_post", counting)

    # when
    more = settlement.waiting_settle()

    # then two transactions, each one ledger call: two games' transfers, then one game's
    assert more is False
    assert calls == [4, 2]
    assert _status(*deals) == [Deal.Status.SETTLED] * 3
    assert ledger_violations() == []


@pytest.mark.django_db
def test_a_run_stops_at_its_bound_oldest_deal_first_and_asks_for_the_next(server_client, settings):
    # given three games with a deal stored each; a run of one transaction of two games
    settings.SETTLEMENT_BATCH = 2
    settings.SETTLEMENT_RUN_TRANSACTIONS = 1
    oldest, older, newest = _points_games(server_client, 3)

    # when a run ends at its bound
    more = settlement.waiting_settle()

    # then it settled the two oldest and asks for another run, which settles the rest
    assert more is True
    assert _status(oldest, older, newest) == ["settled", "settled", "stored"]
    assert settlement.waiting_settle() is False
    assert _status(oldest, older, newest) == ["settled"] * 3


@pytest.mark.django_db
def test_the_task_wakes_its_next_run_until_nothing_is_left(
    server_client, settings, monkeypatch, eager, django_capture_on_commit_callbacks
):
    # given five games with a deal stored each; runs of one transaction of two games
    settings.SETTLEMENT_BATCH = 2
    settings.SETTLEMENT_RUN_TRANSACTIONS = 1
    deals = _points_games(server_client, 5)
    runs, run = [], settlement.waiting_settle
    monkeypatch.setattr(settlement, "waiting_settle", lambda: runs.append(run()) or runs[-1])

    # when one wake comes (each run sends the next: eager here, so it runs at once)
    with django_capture_on_commit_callbacks(execute=True):
        settle_waiting.apply()

    # then every deal is settled, by three runs: the first two woke the next
    assert runs == [True, True, False]
    assert _status(*deals) == ["settled"] * 5
    assert ledger_violations() == []


@pytest.mark.django_db
def test_beats_wake_settles_a_deal_whose_own_wake_was_lost(server_client, settings):
    # given a deal stored whose wake never reached a worker (stored here without one)
    [deal] = _points_games(server_client, 1)

    # when beat's periodic wake comes
    woken = settings.CELERY_BEAT_SCHEDULE["settle-waiting-deals"]
    celery_app.tasks[woken["task"]].apply()

    # then the deal is settled; beat wakes the task every SETTLEMENT_WAKE_SECONDS
    assert _status(deal) == ["settled"]
    assert woken["schedule"] == settings.SETTLEMENT_WAKE_SECONDS


@pytest.mark.django_db
def test_one_bad_deal_does_not_hold_up_the_others_of_a_batch(server_client):
    # given three games' deals, the middle one not scorable
    good, bad, also_good = _points_games(server_client, 3)
    _spoiled(bad)

    # when
    settlement.waiting_settle()

    # then the others are settled; the bad one stays stored, its game open and untouched
    assert _status(good, bad, also_good) == ["settled", "stored", "settled"]
    bad_game = Game.objects.get(pk=bad.game_id)
    assert bad_game.status == Game.Status.OPEN and escrow_balance(bad_game) == Decimal("160.00")
    assert ledger_violations() == []


@pytest.mark.django_db
def test_a_game_that_fails_alone_is_left_alone_for_a_while(server_client, settings, monkeypatch):
    # given a game whose deal cannot be scored, tried once already
    [bad] = _points_games(server_client, 1)
    _spoiled(bad)
    settlement.waiting_settle()
    tried, score = [], settlement._score

    def recording(game, seats, accounts, deal, fee_id):
        tried.append(deal.pk)
        return score(game, seats, accounts, deal, fee_id)

    monkeypatch.setattr(settlement, "_score", recording)

    # when more wakes come, with another game's deal stored meanwhile
    [good] = _points_games_named(server_client, "later")
    settlement.waiting_settle()
    settlement.waiting_settle()

    # then the bad game is not tried again (no hot loop), the other settles
    assert tried == [good.pk]
    assert _status(bad, good) == ["stored", "settled"]

    # and once SETTLEMENT_FAILED_RETRY_SECONDS have passed, it is tried again
    settings.SETTLEMENT_FAILED_RETRY_SECONDS = 0
    settlement._failing.add(bad.game_id)  # now due at once
    settlement.waiting_settle()
    assert tried == [good.pk, bad.pk]
    assert _status(bad) == ["stored"]


@pytest.mark.django_db
def test_a_busy_ledger_is_handed_back_for_a_retry_not_taken_for_a_bad_deal(
    server_client, monkeypatch
):
    # given two games' deals, and a ledger whose locks are busy
    deals = _points_games(server_client, 2)

    def busy(release):
        raise LedgerBusy("lock timeout")

    monkeypatch.setattr(settlement, "release_post", busy)

    # when
    with pytest.raises(LedgerBusy):
        settlement.waiting_settle()

    # then the task is retried (LedgerBusy is Retryable), no game settled apart or left alone
    assert _status(*deals) == ["stored", "stored"]
    assert settlement._failing.skipped() == []


@pytest.mark.django_db
def test_a_lock_holder_settles_its_games_stored_deals(server_client):
    # given a pool game with a deal stored
    game = opened(server_client, "pool", POOL, ("x", "y"))
    deal = stored(game, pool_deal(1, "x", "y"))

    # when its lock holder settles what waits
    with transaction.atomic():
        locked = game_get(client=server_client, game_id="pool", lock=True)
        settled = settlement.games_settle(games=[locked])

    # then the deal is settled and the standings moved on; the game goes on
    assert settled == 1 and _status(deal) == ["settled"]
    game.refresh_from_db()
    assert (game.status, game.deals_played) == (Game.Status.OPEN, 1)
    assert list(game.players.order_by("seat").values_list("score", flat=True)) == [0, 80]


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
def test_a_game_locked_elsewhere_is_skipped_not_waited_for(server_client):
    # given two games with a deal stored each, the first game's row locked by another connection
    locked, other = _points_games(server_client, 2)

    # when a run comes meanwhile
    outcome = while_held(
        lambda: Game.objects.select_for_update().get(pk=locked.game_id),
        settlement.waiting_settle,
    )

    # then it did not wait: it settled the other game; the locked one waits for the next wake
    assert outcome is False
    assert _status(locked, other) == ["stored", "settled"]
    settlement.waiting_settle()  # once the lock is gone
    assert _status(locked, other) == ["settled", "settled"]
    assert ledger_violations() == []


@pytest.mark.django_db(transaction=True)
def test_two_runs_at_once_claim_disjoint_games(server_client, settings):
    # given four games with a deal stored each, one game a transaction
    settings.SETTLEMENT_BATCH = 1
    deals = _points_games(server_client, 4)

    # when two workers run at the same moment
    outcomes = run_in_threads(lambda n: settlement.waiting_settle(), 2)

    # then every deal is settled once: one settlement transfer a game
    assert outcomes == [False, False], outcomes
    assert _status(*deals) == ["settled"] * 4
    assert Transfer.objects.filter(kind=Transfer.Kind.SETTLEMENT).count() == 4
    assert ledger_violations() == []


@pytest.mark.django_db(transaction=True)
def test_the_same_wake_on_four_connections_at_once_settles_once(server_client):
    # given one stored deal
    [deal] = _points_games(server_client, 1)

    # when four duplicated wakes run at the same moment
    outcomes = run_in_threads(lambda n: settle_waiting.apply().get(), 4)

    # then it was settled once
    assert outcomes == [None] * 4, outcomes
    assert _status(deal) == ["settled"]
    assert Transfer.objects.filter(kind=Transfer.Kind.SETTLEMENT).count() == 1
    books_balance_for(Game.objects.get(pk=deal.game_id))
    assert ledger_violations() == []


def _books() -> tuple[dict, dict, dict]:
    """Every account's balance from its entries, the transfers by kind, the events by type."""
    balances = dict(
        Entry.objects.values_list("account__code").annotate(total=Sum("amount")).order_by()
    )
    transfers = Counter(Transfer.objects.values_list("kind", flat=True))
    events = Counter(Event.objects.values_list("type", flat=True))
    return balances, transfers, events


@pytest.mark.django_db
def test_a_redelivered_settlement_message_settles_a_multi_deal_game_once(server_client):
    # given a pool game whose deal 1 was settled, then deal 2 stored (y goes out: the game closes)
    game = opened(server_client, "pool", POOL, ("x", "y"))
    first = stored(game, pool_deal(1, "x", "y"))
    settle_waiting.apply()
    second = stored(game, pool_deal(2, "x", "y"))
    settle_waiting.apply()  # the message's first delivery
    once = _books()

    # when the same message is delivered again, twice (a broker's redelivery, beat's wake)
    settle_waiting.apply()
    settle_waiting.apply()

    # then the books are exactly as after one delivery: each deal settled, paid, told once
    assert _books() == once
    _, transfers, events = once
    assert _status(first, second) == [Deal.Status.SETTLED] * 2
    # the pool pays once, when it closes: one settlement, linked to the closing deal
    assert transfers[Transfer.Kind.SETTLEMENT] == 1
    assert list(DealTransfer.objects.values_list("deal", flat=True)) == [second.pk]
    assert (events[EventType.DEAL_SETTLED], events[EventType.GAME_CLOSED]) == (2, 1)
    game.refresh_from_db()
    assert (game.status, game.deals_played) == (Game.Status.FINISHED, 2)
    assert (game.paid_out, game.fee) == (Decimal("180.00"), Decimal("20.00"))
    assert escrow_balance(game) == ZERO
    books_balance_for(game)
    assert ledger_violations() == []
