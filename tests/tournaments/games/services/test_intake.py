"""`intake`: a posted deal is checked and stored, and nothing else happens in its transaction
(its settlement is queued for after the commit). What is stored, what is refused (a refusal
writes nothing, not even the Idempotency-Key), a repeat, a game with deals waiting or one that
moved since the read (the full path), a batch answered deal by deal in its order."""

from __future__ import annotations

import hashlib
import json

import pytest

from rummy_ledger.api.models import IdempotencyRecord
from rummy_ledger.errors import DomainError
from rummy_ledger.keyed import Keyed, KeyTaken, key_claim
from tests.builders import escrow_balance, make_api, res
from tests.concurrency import run_in_threads
from tests.tournaments.games.services.tables import (
    POINTS,
    POOL,
    opened,
    points_deal,
    pool_deal,
    while_held,
)
from tournaments.errors import (
    DealExists,
    DealInvalid,
    DealOutOfOrder,
    GameNotFound,
    GameNotOpen,
)
from tournaments.games.services import intake
from tournaments.games.services.games import game_cancel
from tournaments.models import Deal, Game
from wallets.models import Transfer


def _keyed(client, key: str = "key-1") -> Keyed:
    """A key whose recorded answer names the deal stored."""
    return Keyed(
        client_id=client.pk,
        key=key,
        request_hash=f"hash-of-{key}",
        answer=lambda deal: (202, json.dumps({"deal_no": deal.deal_no})),
    )


def _nothing_written(game: Game, transfers: int) -> None:
    """No deal, no key claimed, no money moved, the game as opened."""
    assert not Deal.objects.filter(game=game).exists()
    assert not IdempotencyRecord.objects.exists()
    assert Transfer.objects.count() == transfers
    game = Game.objects.get(pk=game.pk)
    assert (game.deals_played, escrow_balance(game)) == (0, game.collected)


@pytest.mark.django_db
def test_a_checked_deal_is_stored_and_nothing_else_happens(server_client):
    # given an open points game
    game = opened(server_client, "g", POINTS, ("a", "b"))
    transfers = Transfer.objects.count()
    payload = points_deal("a", "b")

    # when its deal is posted (the cards as a server may write them)
    payload["results"][0]["groups"][0] = ["A♠", "2s", "3S"]
    deal, created = intake.deal_check_store(client=server_client, game_id="g", payload=payload)

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
    first, _ = intake.deal_check_store(
        client=server_client, game_id="g", payload=points_deal("a", "b")
    )

    again, created = intake.deal_check_store(
        client=server_client, game_id="g", payload=points_deal("a", "b")
    )

    assert (again.pk, created) == (first.pk, False)
    assert Deal.objects.count() == 1


@pytest.mark.django_db
def test_other_results_under_a_stored_number_are_refused(server_client):
    # given deal 1 stored
    opened(server_client, "g", POINTS, ("a", "b"))
    intake.deal_check_store(client=server_client, game_id="g", payload=points_deal("a", "b"))
    before = Deal.objects.get()

    # when deal 1 comes again with b as the winner
    with pytest.raises(DealExists) as refused:
        intake.deal_check_store(client=server_client, game_id="g", payload=points_deal("b", "a"))

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
def test_a_refused_deal_writes_nothing_not_even_its_key(server_client, game_id, spoil, refusal):
    # given an open game
    game = opened(server_client, "g", POINTS, ("a", "b"))
    transfers = Transfer.objects.count()

    # when a deal the checks refuse is posted with a key
    with pytest.raises(refusal):
        intake.deal_check_store(
            client=server_client,
            game_id=game_id,
            payload=spoil(points_deal("a", "b")),
            keyed=_keyed(server_client),
        )

    # then nothing was written, and the test's transaction is still usable (a savepoint)
    _nothing_written(game, transfers)


@pytest.mark.django_db
def test_another_servers_game_does_not_exist_for_it(server_client):
    game = opened(server_client, "g", POINTS, ("a", "b"))
    transfers = Transfer.objects.count()
    other = make_api("games", name="game-server-2")[1]

    with pytest.raises(GameNotFound):
        intake.deal_check_store(client=other, game_id="g", payload=points_deal("a", "b"))

    _nothing_written(game, transfers)


@pytest.mark.django_db
def test_a_deal_of_a_game_no_longer_open_is_refused(server_client):
    # given a cancelled game
    game = opened(server_client, "g", POINTS, ("a", "b"))
    game_cancel(client=server_client, game_id="g")

    # when a deal is posted
    with pytest.raises(GameNotOpen) as refused:
        intake.deal_check_store(client=server_client, game_id="g", payload=points_deal("a", "b"))

    # then nothing is stored
    assert refused.value.details == {"status": "cancelled"}
    assert not Deal.objects.filter(game=game).exists()


@pytest.mark.django_db
def test_the_key_is_claimed_with_the_answer_in_the_deals_write(server_client):
    opened(server_client, "g", POINTS, ("a", "b"))
    keyed = _keyed(server_client)

    deal, _ = intake.deal_check_store(
        client=server_client, game_id="g", payload=points_deal("a", "b"), keyed=keyed
    )

    record = IdempotencyRecord.objects.get()
    answer = json.dumps({"deal_no": 1})
    assert (record.key, record.request_hash, record.status_code, record.body) == (
        "key-1", "hash-of-key-1", 202, answer
    )  # fmt: skip
    assert keyed.recorded == (202, answer)
    assert Deal.objects.get().pk == deal.pk  # in the same write as the deal


@pytest.mark.django_db
def test_a_key_used_before_is_taken_before_anything_is_checked(server_client):
    # given a deal stored under a key
    game = opened(server_client, "g", POINTS, ("a", "b"))
    first, _ = intake.deal_check_store(
        client=server_client,
        game_id="g",
        payload=points_deal("a", "b"),
        keyed=_keyed(server_client),
    )

    # when the key comes with a deal the checks would refuse (no such game)
    with pytest.raises(KeyTaken) as taken:
        intake.deal_check_store(
            client=server_client,
            game_id="none",
            payload=points_deal("a", "b"),
            keyed=_keyed(server_client),
        )

    # then the key's record is what it answers with, and nothing more was written
    answer = json.dumps({"deal_no": 1})
    assert (taken.value.outcome, taken.value.status_code, taken.value.body) == (
        "taken", 202, answer
    )  # fmt: skip
    assert taken.value.request_hash == "hash-of-key-1"
    assert list(Deal.objects.values_list("pk", flat=True)) == [first.pk]
    assert Game.objects.get(pk=game.pk).deals_played == 0


@pytest.mark.django_db
def test_a_game_with_a_deal_waiting_settles_it_before_the_next_is_stored(server_client):
    # given a pool game whose deal 1 is stored, not settled yet
    game = opened(server_client, "pool", POOL, ("x", "y"))
    intake.deal_check_store(client=server_client, game_id="pool", payload=pool_deal(1, "x", "y"))

    # when deal 2 is posted with a key (the full path)
    second, created = intake.deal_check_store(
        client=server_client,
        game_id="pool",
        payload=pool_deal(2, "x", "y"),
        keyed=_keyed(server_client),
    )

    # then deal 1 was settled first (deal 2 is checked against its standings), deal 2 stored
    assert created
    assert list(Deal.objects.order_by("deal_no").values_list("deal_no", "status")) == [
        (1, Deal.Status.SETTLED),
        (2, Deal.Status.STORED),
    ]
    assert Deal.objects.get(deal_no=2).pk == second.pk
    assert Game.objects.get(pk=game.pk).deals_played == 1
    assert IdempotencyRecord.objects.get().body == json.dumps({"deal_no": 2})


@pytest.mark.django_db
def test_a_game_cancelled_after_the_read_takes_the_full_path_and_is_refused(
    server_client, monkeypatch
):
    # given a game cancelled between the intake's read and its store
    game = opened(server_client, "g", POINTS, ("a", "b"))
    read = intake.deal_intake_view

    def read_then_cancelled(**kwargs):
        seen = read(**kwargs)
        game_cancel(client=server_client, game_id="g")
        return seen

    monkeypatch.setattr(intake, "deal_intake_view", read_then_cancelled)

    # when a deal is posted with a key
    with pytest.raises(GameNotOpen):
        intake.deal_check_store(
            client=server_client,
            game_id="g",
            payload=points_deal("a", "b"),
            keyed=_keyed(server_client),
        )

    # then the store found the game moved; the full path refused it: no deal, no key
    assert not Deal.objects.filter(game=game).exists()
    assert not IdempotencyRecord.objects.exists()


@pytest.mark.django_db
def test_a_deal_stored_elsewhere_after_the_read_is_answered_as_a_repeat(server_client, monkeypatch):
    # given the same deal stored by another request between this one's read and its store
    opened(server_client, "g", POINTS, ("a", "b"))
    read, elsewhere, once = intake.deal_intake_view, [], []

    def read_then_stored_elsewhere(**kwargs):
        seen = read(**kwargs)
        if not once:  # the other request's own read is a plain one
            once.append(True)
            elsewhere.append(
                intake.deal_check_store(
                    client=server_client, game_id="g", payload=points_deal("a", "b")
                )
            )
        return seen

    monkeypatch.setattr(intake, "deal_intake_view", read_then_stored_elsewhere)

    # when
    deal, created = intake.deal_check_store(
        client=server_client, game_id="g", payload=points_deal("a", "b")
    )

    # then it is the deal stored elsewhere, and it is stored once
    [(other, other_created)] = elsewhere
    assert other_created and (deal.pk, created) == (other.pk, False)
    assert Deal.objects.count() == 1


@pytest.mark.django_db
def test_a_deal_stored_now_wakes_a_settlement_worker(server_client, monkeypatch):
    opened(server_client, "g", POINTS, ("a", "b"))
    woken = []
    monkeypatch.setattr(intake, "settlement_wake", lambda: woken.append(True))

    intake.deal_store(client=server_client, game_id="g", payload=points_deal("a", "b"))
    intake.deal_store(client=server_client, game_id="g", payload=points_deal("a", "b"))

    assert woken == [True]  # a repeat wakes no one
    assert Deal.objects.get().status == Deal.Status.STORED


@pytest.mark.django_db
def test_a_batch_is_answered_deal_by_deal_in_its_order(server_client):
    # given two points games and a pool game; g1's deal stored before
    for game_id, players in (("g1", ("a", "b")), ("g2", ("c", "d"))):
        opened(server_client, game_id, POINTS, players)
    opened(server_client, "pool", POOL, ("x", "y"))
    before, _ = intake.deal_check_store(
        client=server_client, game_id="g1", payload=points_deal("a", "b")
    )

    # when a batch brings g1's deal again, a deal of no game, g2's, and pool's deals 1 and 2
    outcomes = intake.deals_check_store(
        client=server_client,
        deals=[
            ("g1", points_deal("a", "b")),
            ("none", points_deal("a", "b")),
            ("g2", points_deal("c", "d")),
            ("pool", pool_deal(1, "x", "y")),
            ("pool", pool_deal(2, "x", "y")),
        ],
    )

    # then: the repeat, the refusal, two stored together, and pool's second left to the caller
    repeat, refused, g2, pool, left = outcomes
    assert (repeat[0].pk, repeat[1]) == (before.pk, False)
    assert isinstance(refused, GameNotFound)
    assert g2[1] and pool[1] and left is None
    stored = Deal.objects.order_by("pk").values_list("pk", "game__game_id", "deal_no")
    assert list(stored) == [(before.pk, "g1", 1), (g2[0].pk, "g2", 1), (pool[0].pk, "pool", 1)]
    assert intake.deals_check_store(client=server_client, deals=[]) == []


# --- real concurrent connections ----------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_the_same_deal_posted_on_four_connections_at_once_is_stored_once(server_client):
    opened(server_client, "g", POINTS, ("a", "b"))

    outcomes = run_in_threads(
        lambda n: intake.deal_check_store(
            client=server_client, game_id="g", payload=points_deal("a", "b")
        ),
        4,
    )

    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    assert sorted(created for _, created in outcomes) == [False, False, False, True]
    assert len({deal.pk for deal, _ in outcomes}) == 1
    assert Deal.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_key_held_by_a_request_still_running_is_in_flight(server_client):
    # given another connection holding the key in its open transaction
    game = opened(server_client, "g", POINTS, ("a", "b"))

    # when the deal is posted under that key meanwhile
    outcome = while_held(
        lambda: key_claim(client_id=server_client.pk, key="key-1", request_hash="hash-of-key-1",
                          status_code=202, body="{}"),
        lambda: intake.deal_check_store(client=server_client, game_id="g",
                                        payload=points_deal("a", "b"), keyed=_keyed(server_client)),
    )  # fmt: skip

    # then it is in flight (the API answers 409 with Retry-After) and nothing is stored
    assert isinstance(outcome, KeyTaken) and outcome.outcome == "in_flight"
    assert not Deal.objects.filter(game=game).exists()
