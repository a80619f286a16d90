"""The same deal posted many times at once, on real concurrent connections: settled once."""

from decimal import Decimal

import pytest

from tests.builders import LOSER_22, LOSER_50, WINNER, Server, books_balance_for, funded_player, res
from tests.builders import template as make_template
from tests.concurrency import run_in_threads
from tests.tournaments.worker import private_queue
from tests.wallets.invariants import ledger_violations
from tournaments.games.services import settlement
from tournaments.models import Deal, Game
from tournaments.tasks import settle_waiting
from wallets.models import Transfer

pytestmark = pytest.mark.django_db(transaction=True)


def test_same_deal_posted_concurrently_is_settled_once(eager):
    server = Server()
    make_template("points-1", "points", point_value=Decimal("1.00"))
    for p in "abc":
        funded_player(p, "100.00")
    server.open("g", "points-1", list("abc"))
    results = [res("a", "declared", WINNER), res("b", "lost", LOSER_22), res("c", "lost", LOSER_50)]

    def post(i: int) -> tuple[int, str | None]:
        # half reuse one idempotency key, half send their own
        key = "same-key" if i % 2 else f"key-{i}"
        r = server.deal("g", 1, results, key=key)
        return r.status_code, r.get("Retry-After")

    statuses = run_in_threads(post, 8)
    assert all(s in (202, 409) for s, _ in statuses), statuses
    assert all(retry == "1" for s, retry in statuses if s == 409)
    assert sum(1 for s, _ in statuses if s == 202) >= 4
    assert Deal.objects.count() == 1
    # a wake that met the game locked by a repeat's transaction left it to the next: beat's
    settle_waiting.delay()
    game = Game.objects.get()
    assert game.status == Game.Status.FINISHED
    assert Transfer.objects.filter(kind="settlement").count() == 1  # prize and fee
    books_balance_for(game)
    assert ledger_violations() == []


def test_settle_task_run_concurrently_settles_once():
    server = Server()
    make_template("points-1", "points", point_value=Decimal("1.00"))
    for p in "ab":
        funded_player(p, "100.00")
    server.open("g", "points-1", ["a", "b"])
    with private_queue():  # the queued message goes where no worker listens
        server.deal("g", 1, [res("a", "declared", WINNER), res("b", "lost", LOSER_22)])
    deal = Deal.objects.get()
    assert deal.status == Deal.Status.STORED  # no worker and not eager: only stored

    outcomes = run_in_threads(lambda i: settlement.waiting_settle(), 6)
    # a run that found the game locked by another skipped it; none failed
    assert outcomes == [False] * 6, outcomes

    deal.refresh_from_db()
    assert deal.status == Deal.Status.SETTLED
    assert Transfer.objects.filter(kind="settlement").count() == 1
    books_balance_for(Game.objects.get())
    assert ledger_violations() == []


def test_a_bad_deal_in_another_game_does_not_block_settlement():
    server = Server()
    make_template("points-1", "points", point_value=Decimal("1.00"))
    for p in "abcd":
        funded_player(p, "100.00")
    server.open("good", "points-1", ["a", "b"])
    server.open("bad", "points-1", ["c", "d"])
    with private_queue():
        server.deal("bad", 1, [res("c", "declared", WINNER), res("d", "lost", LOSER_22)])
        server.deal("good", 1, [res("a", "declared", WINNER), res("b", "lost", LOSER_22)])
    bad = Deal.objects.get(game__game_id="bad")
    Deal.objects.filter(pk=bad.pk).update(results=[{"player": "c", "outcome": "nonsense"}])
    good = Deal.objects.get(game__game_id="good")

    settlement.waiting_settle()

    good.refresh_from_db()
    bad.refresh_from_db()
    assert good.status == Deal.Status.SETTLED and bad.status == Deal.Status.STORED
    books_balance_for(Game.objects.get(game_id="good"))
    assert ledger_violations() == []


def test_beats_wake_settles_stored_deals_whose_message_was_lost(request):
    server = Server()
    make_template("points-1", "points", point_value=Decimal("1.00"))
    for p in "ab":
        funded_player(p, "100.00")
    server.open("g", "points-1", ["a", "b"])
    with private_queue():  # the message is lost: no worker listens on that queue
        server.deal("g", 1, [res("a", "declared", WINNER), res("b", "lost", LOSER_22)])
    assert Deal.objects.get().status == Deal.Status.STORED
    request.getfixturevalue("eager")  # from here on, tasks run at once
    settle_waiting.delay()  # beat's wake (every SETTLEMENT_WAKE_SECONDS)
    assert Deal.objects.get().status == Deal.Status.SETTLED
    settle_waiting.delay()  # a duplicate wake finds nothing left
    books_balance_for(Game.objects.get())
