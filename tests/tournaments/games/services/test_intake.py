"""`intake`: a posted deal is checked and stored, and nothing else happens in its transaction
(its settlement is queued for after the commit). One path: what is stored, what is refused (a
refusal writes nothing), a repeat, deals stored before and not settled yet (scored in memory to
check the next one: an elimination, a game they end), a game that moves while a post waits for
its lock, posts on one game from real concurrent connections, a batch answered deal by deal in
its order, the same deals one by one or as a batch."""

from __future__ import annotations

import hashlib
import json
import threading
import time
import uuid

import pytest
from django.db import connection, transaction
from hypothesis import HealthCheck, given, settings

from rummy_ledger.api.models import IdempotencyRecord
from rummy_ledger.errors import DomainError, Retryable
from tests.builders import escrow_balance, make_api, res
from tests.concurrency import run_in_threads
from tests.tournaments.games.services.tables import (
    PLANS,
    POINTS,
    POOL,
    opened,
    points_deal,
    pool3_deal,
    pool_deal,
    pool_deal_of_kind,
    while_held,
)
from tournaments.errors import (
    DealExists,
    DealInvalid,
    DealOutOfOrder,
    DealRejected,
    GameNotFound,
    GameNotOpen,
)
from tournaments.games.services import intake
from tournaments.games.services.games import game_cancel
from tournaments.games.services.settlement import waiting_settle
from tournaments.models import Deal, Game, GamePlayer
from wallets.models import Transfer


def _nothing_written(game: Game, transfers: int) -> None:
    """No deal, no key recorded, no money moved, the game as opened."""
    assert not Deal.objects.filter(game=game).exists()
    assert not IdempotencyRecord.objects.exists()
    assert Transfer.objects.count() == transfers
    game = Game.objects.get(pk=game.pk)
    assert (game.deals_played, escrow_balance(game)) == (0, game.collected)


def _statuses(game: Game) -> list[tuple[int, str]]:
    return list(Deal.objects.filter(game=game).order_by("deal_no").values_list("deal_no", "status"))


@pytest.mark.django_db
def test_a_checked_deal_is_stored_and_nothing_else_happens(server_client):
    # given an open points game
    game = opened(server_client, "g", POINTS, ("a", "b"))
    transfers = Transfer.objects.count()
    payload = points_deal("a", "b")

    # when its deal is posted (the cards as a server may write them)
    payload["results"][0]["groups"][0] = ["A♠", "2s", "3S"]
    deal, created = intake.deal_store(client=server_client, game_id="g", payload=payload)

    # then it is stored with its cards canonical and its content's hash; nothing is settled
    assert created and deal.pk is not None
    stored = Deal.objects.get()
    assert (stored.pk, stored.deal_no, stored.status) == (deal.pk, 1, Deal.Status.STORED)
    assert stored.results[0]["groups"][0] == ["AS", "2S", "3S"]
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
    assert stored.payload_hash == digest
    assert Transfer.objects.count() == transfers
    assert Game.objects.get(pk=game.pk).deals_played == 0


@pytest.mark.django_db
def test_the_same_deal_posted_again_is_the_stored_one(server_client):
    opened(server_client, "g", POINTS, ("a", "b"))
    first, _ = intake.deal_store(client=server_client, game_id="g", payload=points_deal("a", "b"))

    again, created = intake.deal_store(
        client=server_client, game_id="g", payload=points_deal("a", "b")
    )

    assert (again.pk, created) == (first.pk, False)
    assert Deal.objects.count() == 1


@pytest.mark.django_db
def test_other_results_under_a_stored_number_are_refused(server_client):
    # given deal 1 stored
    opened(server_client, "g", POINTS, ("a", "b"))
    intake.deal_store(client=server_client, game_id="g", payload=points_deal("a", "b"))
    before = Deal.objects.get()

    # when deal 1 comes again with b as the winner
    with pytest.raises(DealExists) as refused:
        intake.deal_store(client=server_client, game_id="g", payload=points_deal("b", "a"))

    # then it is refused and the stored deal is unchanged
    assert refused.value.details == {"deal_no": 1}
    after = Deal.objects.get()
    assert (after.pk, after.payload_hash, after.results) == (
        before.pk, before.payload_hash, before.results
    )  # fmt: skip


def _out_of_order(payload):
    return {**payload, "deal_no": 2}


def _bad_card(payload):
    payload["results"][0]["groups"][0] = ["1H", "2S", "3S"]
    return payload


def _stranger(payload):
    payload["results"][1] = res("z", "first_drop")
    return payload


def _two_results(payload):
    payload["results"].append(res("a", "first_drop"))
    return payload


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("game_id", "spoil", "refusal"),
    [
        ("none", lambda p: p, GameNotFound),
        ("g", _out_of_order, DealOutOfOrder),
        ("g", _bad_card, DealInvalid),
        ("g", _stranger, DomainError),
        ("g", _two_results, DealInvalid),
    ],
    ids=["no-such-game", "out-of-order", "a-card-that-is-none", "a-stranger", "two-results"],
)
def test_a_refused_deal_writes_nothing(server_client, game_id, spoil, refusal):
    # given an open game
    game = opened(server_client, "g", POINTS, ("a", "b"))
    transfers = Transfer.objects.count()

    # when a deal the checks refuse is posted
    with pytest.raises(refusal):
        intake.deal_store(
            client=server_client, game_id=game_id, payload=spoil(points_deal("a", "b"))
        )

    # then nothing was written, and the caller's transaction is still usable
    _nothing_written(game, transfers)


@pytest.mark.django_db
def test_another_servers_game_does_not_exist_for_it(server_client):
    game = opened(server_client, "g", POINTS, ("a", "b"))
    transfers = Transfer.objects.count()
    other = make_api("games", name="game-server-2")[1]

    with pytest.raises(GameNotFound):
        intake.deal_store(client=other, game_id="g", payload=points_deal("a", "b"))

    _nothing_written(game, transfers)


@pytest.mark.django_db
def test_a_deal_of_a_game_no_longer_open_is_refused(server_client):
    # given a cancelled game
    game = opened(server_client, "g", POINTS, ("a", "b"))
    game_cancel(client=server_client, game_id="g")

    # when a deal is posted
    with pytest.raises(GameNotOpen) as refused:
        intake.deal_store(client=server_client, game_id="g", payload=points_deal("a", "b"))

    # then nothing is stored
    assert refused.value.details == {"status": "cancelled"}
    assert not Deal.objects.filter(game=game).exists()


# --- deals stored before, not settled yet: scored in memory -------------------------------------


@pytest.mark.django_db
def test_deals_waiting_for_settlement_are_scored_in_memory_to_check_the_next(server_client):
    # given a pool game whose deals 1 and 2 are stored, not settled: y reaches 160 (out)
    game = opened(server_client, "pool3", POOL, ("x", "y", "z"))
    for deal_no in (1, 2):
        intake.deal_store(client=server_client, game_id="pool3", payload=pool3_deal(deal_no))
    transfers = Transfer.objects.count()

    # when deal 3 comes with a result for y, then without
    with pytest.raises(DealRejected) as refused:
        intake.deal_store(client=server_client, game_id="pool3", payload=pool3_deal(3))
    _, created = intake.deal_store(
        client=server_client, game_id="pool3", payload=pool3_deal(3, y=False)
    )

    # then y is out by the stored deals' scores, deal 3 follows them; nothing was settled
    assert refused.value.code == "player_eliminated" and refused.value.details == {"players": ["y"]}
    assert created and _statuses(game) == [(n, Deal.Status.STORED) for n in (1, 2, 3)]
    assert Transfer.objects.count() == transfers
    assert Game.objects.get(pk=game.pk).deals_played == 0
    seats = GamePlayer.objects.filter(game=game).values_list("score", "eliminated")
    assert set(seats) == {(0, False)}

    # and settlement reaches the standings the checks saw
    waiting_settle()
    seats = dict(GamePlayer.objects.filter(game=game).values_list("player__external_id", "score"))
    eliminated = GamePlayer.objects.filter(game=game, eliminated=True)
    assert seats == {"x": 0, "y": 160, "z": 60}
    assert list(eliminated.values_list("player__external_id", flat=True)) == ["y"]
    assert Game.objects.get(pk=game.pk).deals_played == 3


@pytest.mark.django_db
def test_a_game_a_stored_deal_ends_takes_no_more_deals(server_client):
    # given a 2-player pool game whose stored deal 2 puts y out: x has won, nothing is settled
    game = opened(server_client, "pool", POOL, ("x", "y"))
    for deal_no in (1, 2):
        intake.deal_store(
            client=server_client, game_id="pool", payload=pool_deal(deal_no, "x", "y")
        )

    # when deal 3 is posted
    with pytest.raises(GameNotOpen) as refused:
        intake.deal_store(client=server_client, game_id="pool", payload=pool_deal(3, "x", "y"))

    # then it is refused as by a finished game, and the game still waits for its settlement
    assert refused.value.details == {"status": "finished"}
    assert _statuses(game) == [(1, Deal.Status.STORED), (2, Deal.Status.STORED)]
    assert Game.objects.get(pk=game.pk).status == Game.Status.OPEN


@pytest.mark.django_db
def test_a_repeat_of_a_stored_deal_is_answered_even_when_a_later_one_ended_the_game(server_client):
    opened(server_client, "pool", POOL, ("x", "y"))
    first, _ = intake.deal_store(
        client=server_client, game_id="pool", payload=pool_deal(1, "x", "y")
    )
    intake.deal_store(client=server_client, game_id="pool", payload=pool_deal(2, "x", "y"))

    again, created = intake.deal_store(
        client=server_client, game_id="pool", payload=pool_deal(1, "x", "y")
    )

    assert (again.pk, again.status, created) == (first.pk, Deal.Status.STORED, False)


# --- settlement queued ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_deal_stored_now_wakes_a_settlement_worker(server_client, monkeypatch):
    opened(server_client, "g", POINTS, ("a", "b"))
    woken = []
    monkeypatch.setattr(intake, "settlement_wake", lambda deals: woken.append(deals))

    intake.deal_store(client=server_client, game_id="g", payload=points_deal("a", "b"))
    intake.deal_store(client=server_client, game_id="g", payload=points_deal("a", "b"))

    assert woken == [1]  # a repeat wakes no one
    assert Deal.objects.get().status == Deal.Status.STORED


@pytest.mark.django_db
def test_a_batch_is_answered_deal_by_deal_in_its_order_and_wakes_settlement_once(
    server_client, monkeypatch
):
    # given two points games and a pool game; g1's deal stored before
    woken = []
    monkeypatch.setattr(intake, "settlement_wake", lambda deals: woken.append(deals))
    for game_id, players in (("g1", ("a", "b")), ("g2", ("c", "d"))):
        opened(server_client, game_id, POINTS, players)
    opened(server_client, "pool", POOL, ("x", "y"))
    before, _ = intake.deal_store(client=server_client, game_id="g1", payload=points_deal("a", "b"))
    woken.clear()

    # when a batch brings g1's deal again, a deal of no game, g2's, pool's deals 1, 3 and 2
    outcomes = intake.deals_store(
        client=server_client,
        deals=[
            ("g1", points_deal("a", "b")),
            ("none", points_deal("a", "b")),
            ("g2", points_deal("c", "d")),
            ("pool", pool_deal(1, "x", "y")),
            ("pool", pool_deal(3, "x", "y")),
            ("pool", pool_deal(2, "x", "y")),
        ],
        seconds=60,
    )

    # then: the repeat, the refusal, g2's and pool's 1 and 2 stored in order, 3 out of order
    repeat, refused, g2, pool1, early, pool2 = outcomes
    assert (repeat[0].pk, repeat[1]) == (before.pk, False)
    assert isinstance(refused, GameNotFound) and isinstance(early, DealOutOfOrder)
    assert g2[1] and pool1[1] and pool2[1]
    stored = Deal.objects.order_by("pk").values_list("pk", "game__game_id", "deal_no")
    assert list(stored) == [
        (before.pk, "g1", 1),
        (g2[0].pk, "g2", 1),
        (pool1[0].pk, "pool", 1),
        (pool2[0].pk, "pool", 2),
    ]
    assert woken == [3]  # one wake for the batch's three new deals
    assert intake.deals_store(client=server_client, deals=[], seconds=60) == []


@pytest.mark.django_db
def test_a_batch_out_of_time_tries_no_more_deals_once_one_did_work(server_client):
    for game_id, players in (("g1", ("a", "b")), ("g2", ("c", "d"))):
        opened(server_client, game_id, POINTS, players)
    intake.deal_store(client=server_client, game_id="g1", payload=points_deal("a", "b"))

    outcomes = intake.deals_store(
        client=server_client,
        deals=[
            ("g1", points_deal("a", "b")),
            ("g2", points_deal("c", "d")),
            ("g1", points_deal("a", "b")),
        ],
        seconds=0,
    )

    # a repeat is no work: g2's deal is tried, then time is up
    assert outcomes[0][1] is False and outcomes[1][1] is True and outcomes[2] is None


# --- the same deals one by one or as a batch ---------------------------------------------------


def _answer(outcome) -> tuple:
    if isinstance(outcome, Exception):
        return (type(outcome).__name__, outcome.code)
    deal, created = outcome
    return (deal.deal_no, deal.status, created)


@pytest.mark.django_db
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=PLANS)
def test_deals_one_by_one_or_as_a_batch_store_and_answer_the_same(plan):
    # given twin pool games of two game servers
    prefix = uuid.uuid4().hex[:8]
    one, batch = (make_api("games", name=f"{name}-{prefix}")[1] for name in ("one", "batch"))
    for game in range(3):
        for client in (one, batch):
            opened(client, f"{prefix}g{game}", POOL, (f"{prefix}x{game}", f"{prefix}y{game}"))
    deals = []
    for game, deal_no, kind in plan:
        deal = pool_deal_of_kind(prefix, game, deal_no, kind)
        deals.append((deal.pop("game_id"), deal))

    # when one posts them one after the other and the other as a batch
    singly = []
    for game_id, payload in deals:
        try:
            singly.append(intake.deal_store(client=one, game_id=game_id, payload=payload))
        except DomainError as refused:
            singly.append(refused)
    together = intake.deals_store(client=batch, deals=deals, seconds=60)

    # then every deal is answered the same, and the same deals are stored
    assert [_answer(o) for o in together] == [_answer(o) for o in singly]

    def stored(client) -> list:
        return sorted(
            Deal.objects.filter(game__client=client).values_list(
                "game__game_id", "deal_no", "payload_hash", "results"
            )
        )

    assert stored(one) == stored(batch)


# --- real concurrent connections ----------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_the_same_deal_posted_on_four_connections_at_once_is_stored_once(server_client):
    opened(server_client, "g", POINTS, ("a", "b"))

    outcomes = run_in_threads(
        lambda n: intake.deal_store(
            client=server_client, game_id="g", payload=points_deal("a", "b")
        ),
        4,
    )

    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    assert sorted(created for _, created in outcomes) == [False, False, False, True]
    assert len({deal.pk for deal, _ in outcomes}) == 1
    assert Deal.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_deals_1_and_2_of_a_game_posted_at_once_are_both_stored_in_order(server_client):
    # given a pool game of three
    game = opened(server_client, "pool3", POOL, ("x", "y", "z"))

    # when deal 2 and deal 1 are posted at once on two connections, deal 2 retried once refused
    def post(n: int):
        payload = pool3_deal(2 - n)
        try:
            return intake.deal_store(client=server_client, game_id="pool3", payload=payload)
        except DealOutOfOrder:  # it came first: a server posts deals in order, and retries
            time.sleep(0.2)
            return intake.deal_store(client=server_client, game_id="pool3", payload=payload)

    outcomes = run_in_threads(post, 2)

    # then both are stored, each once, numbered in order
    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    assert all(created for _, created in outcomes)
    assert _statuses(game) == [(1, Deal.Status.STORED), (2, Deal.Status.STORED)]


@pytest.mark.django_db(transaction=True)
def test_a_post_waits_for_the_games_lock_and_checks_the_game_as_it_then_is(server_client):
    # given another connection that cancels the game while the post waits for the game's lock
    game = opened(server_client, "g", POINTS, ("a", "b"))
    locked, waited = threading.Event(), {}

    def cancel() -> None:
        with transaction.atomic():
            game_cancel(client=server_client, game_id="g")  # holds the game's row lock
            locked.set()
            time.sleep(0.3)

    def post():
        locked.wait(10)
        started = time.monotonic()
        try:
            return intake.deal_store(
                client=server_client, game_id="g", payload=points_deal("a", "b")
            )
        finally:
            waited["seconds"] = time.monotonic() - started

    canceller, outcome = run_in_threads(lambda n: post() if n else cancel(), 2)

    # then the post waited, saw the game cancelled, and stored nothing
    assert canceller is None
    assert isinstance(outcome, GameNotOpen) and outcome.details == {"status": "cancelled"}
    assert waited["seconds"] >= 0.2
    assert not Deal.objects.filter(game=game).exists()


@pytest.mark.django_db(transaction=True)
def test_a_game_held_past_the_lock_bound_answers_its_deals_busy_and_the_others_go_on(
    server_client,
):
    # given g1 held by another transaction, and a lock bound of 200 ms
    for game_id, players in (("g1", ("a", "b")), ("g2", ("c", "d"))):
        opened(server_client, game_id, POINTS, players)

    def hold() -> None:
        Game.objects.select_for_update().get(game_id="g1")

    def post():
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '200ms'")
            return intake.deals_store(
                client=server_client,
                deals=[("g1", points_deal("a", "b")), ("g2", points_deal("c", "d"))],
                seconds=60,
            )

    # when a batch brings a deal of each
    busy, stored = while_held(hold, post)

    # then g1's is busy (retryable) and nothing of it written; g2's is stored
    assert isinstance(busy, Retryable) and busy.code == "busy"
    assert stored[1] is True
    assert list(Deal.objects.values_list("game__game_id", flat=True)) == ["g2"]
