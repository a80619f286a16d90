"""`opening.game_open`: a game's opening in two round trips. Every player's stake is collected
into the new escrow or none is (the refusal names everyone short), the key is claimed with the
answer in the same write, and what the two round trips do not cover (a player not registered,
bonus an entry may take, a client's pairings or hourly escrow cap) takes `games.game_open`."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from djmoney.money import Money

from rummy_ledger.api.models import IdempotencyRecord
from rummy_ledger.keyed import Keyed, KeyTaken, key_claim
from tests.builders import bonus_granted, escrow_balance, funded_player, template
from tests.concurrency import run_in_threads
from tests.tournaments.games.services.tables import POINTS, POOL, templates
from tests.wallets.invariants import ledger_violations
from tournaments.errors import GameErrorCode, GameExists, OpenRejected
from tournaments.games.services import games, opening
from tournaments.games.services.escrow import PlayersShort
from tournaments.models import Game, GamePlayer
from wallets.errors import PlayerNotPaired, RealMoneyUnavailable, SelfExcluded
from wallets.models import CHIPS, Account, BonusLot, Bucket, ClientEscrowTake, Player, Transfer
from wallets.services.deposits import chips_grant
from wallets.services.protection import self_exclusion_start

STAKE = Decimal("80.00")  # points-1: 80 points of 1.00


def _funded(*players: str, amount: str = "500.00") -> None:
    templates()
    for player in players:
        funded_player(player, amount)


def _open(client, game_id: str = "g", players=("a", "b"), slug: str = POINTS, keyed=None):
    return opening.game_open(
        client=client, game_id=game_id, template_slug=slug, players=list(players), keyed=keyed
    )


def _keyed(client, key: str = "open-1") -> Keyed:
    """A key whose recorded answer names the game and its seats."""
    return Keyed(
        client_id=client.pk,
        key=key,
        request_hash=f"hash-of-{key}",
        answer=lambda opened: (201, json.dumps({"game_id": opened[0].game_id,
                                                "seats": len(opened[1])})),
    )  # fmt: skip


def _deposits(*players: str) -> list[Decimal]:
    accounts = Account.objects.filter(bucket=Bucket.DEPOSIT, player__external_id__in=players)
    return [a.balance.amount for a in accounts.order_by("player__external_id")]


class _Written:
    """What an opening writes, counted before it: to assert that a refusal wrote none of it."""

    def __init__(self, *players: str):
        self.players = players
        self.counts = self._counts()
        self.deposits = _deposits(*players)

    def _counts(self) -> tuple[int, ...]:
        escrows = Account.objects.filter(kind=Account.Kind.ESCROW)
        return (Game.objects.count(), GamePlayer.objects.count(), escrows.count(),
                Transfer.objects.count(), IdempotencyRecord.objects.count())  # fmt: skip

    def none(self) -> None:
        assert self._counts() == self.counts
        assert _deposits(*self.players) == self.deposits


@pytest.fixture
def spied_full_path(monkeypatch):
    """The calls that took `games.game_open` (the one locked transaction)."""
    calls, full = [], games.game_open

    def spy(**kwargs):
        calls.append(kwargs["game_id"])
        return full(**kwargs)

    monkeypatch.setattr(games, "game_open", spy)
    return calls


@pytest.mark.django_db
def test_an_opening_collects_every_stake_in_two_round_trips(server_client, spied_full_path):
    # given three funded players
    _funded("a", "b", "c")

    # when a points game opens for them
    with CaptureQueriesContext(connection) as sent:
        game = _open(server_client, players=("a", "b", "c"))

    # then one read and one write: the game, its escrow holding every stake, the seats in order
    statements = [q["sql"] for q in sent.captured_queries if "SAVEPOINT" not in q["sql"]]
    assert len(statements) == 2 and spied_full_path == []  # the test's savepoints aside
    stored = Game.objects.get(pk=game.pk)
    assert (stored.game_id, stored.status, stored.collected) == ("g", "open", 3 * STAKE)
    assert escrow_balance(stored) == 3 * STAKE
    seats = GamePlayer.objects.filter(game=game).order_by("seat")
    assert [(s.seat, s.player.external_id, s.score) for s in seats] == [
        (1, "a", 0), (2, "b", 0), (3, "c", 0)
    ]  # fmt: skip
    assert [s.contributed for s in seats] == [[["deposit", "80.00"]]] * 3
    assert _deposits("a", "b", "c") == [Decimal("420.00")] * 3
    assert ledger_violations() == []


@pytest.mark.django_db
def test_no_stake_is_collected_when_anyone_is_short_and_everyone_short_is_named(server_client):
    # given a with enough, b with 50.00 and c with nothing
    _funded("a")
    _funded("b", amount="50.00")
    _funded("c", amount="0")
    written = _Written("a", "b", "c")

    # when
    with pytest.raises(PlayersShort) as refused:
        _open(server_client, players=("a", "b", "c"), keyed=_keyed(server_client))

    # then b and c are named, and nothing was written: no game, escrow, money moved or key
    assert refused.value.details == {"players": ["b", "c"], "amount": "80.00", "currency": "INR"}
    written.none()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("slug", "players", "code"),
    [
        ("no-such", ("a", "b"), GameErrorCode.UNKNOWN_TEMPLATE),
        (POINTS, ("a", "a"), None),
        (POINTS, ("a",), None),
    ],
    ids=["unknown-template", "a-player-twice", "one-player"],
)
def test_an_opening_the_terms_refuse_writes_nothing(server_client, slug, players, code):
    _funded("a", "b")
    written = _Written("a", "b")

    with pytest.raises(OpenRejected) as refused:
        _open(server_client, players=players, slug=slug, keyed=_keyed(server_client))

    assert code is None or refused.value.code == code
    written.none()


@pytest.mark.django_db
def test_a_game_id_used_before_is_refused_with_what_became_of_it(server_client):
    # given game g opened
    _funded("a", "b", "c", "d")
    _open(server_client)
    written = _Written("a", "b", "c", "d")

    # when another opening brings the same id
    with pytest.raises(GameExists) as refused:
        _open(server_client, players=("c", "d"))

    # then it is refused with g's status, and nothing more is written
    assert refused.value.details == {"game_id": "g", "status": "open"}
    written.none()


@pytest.mark.django_db
def test_the_key_is_claimed_with_the_answer_in_the_openings_write(server_client):
    _funded("a", "b")
    keyed = _keyed(server_client)

    _open(server_client, keyed=keyed)

    record = IdempotencyRecord.objects.get()
    answer = json.dumps({"game_id": "g", "seats": 2})
    assert (record.key, record.request_hash, record.status_code, record.body) == (
        "open-1", "hash-of-open-1", 201, answer
    )  # fmt: skip
    assert keyed.recorded == (201, answer)


@pytest.mark.django_db
def test_a_key_used_before_is_taken_before_anything_is_checked(server_client):
    # given a game opened under a key
    _funded("a", "b")
    _open(server_client, keyed=_keyed(server_client))
    written = _Written("a", "b")

    # when the key comes with an opening the checks would refuse
    with pytest.raises(KeyTaken) as taken:
        _open(server_client, game_id="other", slug="no-such", keyed=_keyed(server_client))

    # then it is the key's record, and nothing more is written
    assert (taken.value.outcome, taken.value.status_code) == ("taken", 201)
    written.none()


@pytest.mark.django_db
def test_a_key_taken_between_the_read_and_the_write_rolls_the_opening_back(
    server_client, monkeypatch
):
    # given the key claimed by another request after this opening read it free
    _funded("a", "b")
    read = opening.game_open_view

    def read_then_key_taken(**kwargs):
        seen = read(**kwargs)
        key_claim(client_id=server_client.pk, key="open-1", request_hash="other",
                  status_code=201, body="first")  # fmt: skip
        return seen

    monkeypatch.setattr(opening, "game_open_view", read_then_key_taken)
    written = _Written("a", "b")

    # when
    with pytest.raises(KeyTaken) as taken:
        _open(server_client, keyed=_keyed(server_client))

    # then the write claimed nothing and wrote nothing: the key's record is the other's
    assert (taken.value.outcome, taken.value.request_hash, taken.value.body) == (
        "taken", "other", "first"
    )  # fmt: skip
    assert not Game.objects.exists()
    assert _deposits("a", "b") == written.deposits
    assert Transfer.objects.count() == written.counts[3]


@pytest.mark.django_db
def test_a_self_excluded_player_is_refused_on_the_two_round_trips(server_client, spied_full_path):
    # given b self-excluded for a week
    _funded("a", "b")
    self_exclusion_start(player_external_id="b", days=7, changed_by="test")
    written = _Written("a", "b")

    # when
    with pytest.raises(SelfExcluded) as refused:
        _open(server_client, keyed=_keyed(server_client))

    # then b is named (the read brought the exclusion along), and nothing was written
    assert [e["player"] for e in refused.value.details["players"]] == ["b"]
    assert spied_full_path == []
    written.none()


@pytest.mark.django_db
def test_with_real_money_off_a_cash_game_is_refused_and_a_chips_game_opens(server_client, settings):
    # given real money switched off
    _funded("a", "b")
    template("chips-1", "points", currency=CHIPS, point_value=Decimal("1.00"))
    for player in ("a", "b"):
        chips_grant(player_external_id=player, amount=Money("500", CHIPS), reference=player)
    settings.REAL_MONEY = "off"
    written = _Written("a", "b")

    # when a cash game and a chips game open
    with pytest.raises(RealMoneyUnavailable) as refused:
        _open(server_client)
    written.none()
    game = _open(server_client, game_id="chips", slug="chips-1")

    # then the cash game named both players; the chips game took its stakes in chips
    assert [r["player"] for r in refused.value.details["players"]] == ["a", "b"]
    assert escrow_balance(game) == Decimal("160.00") and game.currency == "CHP"


# --- what takes the one locked transaction ------------------------------------------------------


@pytest.mark.django_db
def test_a_player_not_registered_takes_the_full_path(server_client, spied_full_path):
    # given b never registered (no money either)
    _funded("a")
    written = _Written("a")

    # when
    with pytest.raises(PlayersShort) as refused:
        _open(server_client)

    # then the full path registered b, found b short and rolled everything back
    assert spied_full_path == ["g"]
    assert refused.value.details["players"] == ["b"]
    assert not Player.objects.filter(external_id="b").exists()
    written.none()


@pytest.mark.django_db
def test_bonus_an_entry_may_take_takes_the_full_path(server_client, spied_full_path):
    # given a with 50.00 of bonus, which a pool entry of 100.00 may take 10.00 of
    _funded("a", "b")
    bonus_granted("a", "50.00")

    # when
    game = _open(server_client, slug=POOL)

    # then the full path spent 10.00 of a's lot
    assert spied_full_path == ["g"]
    assert BonusLot.objects.get(player__external_id="a").remaining == Decimal("40.00")
    assert escrow_balance(game) == Decimal("200.00")
    assert _deposits("a", "b") == [Decimal("410.00"), Decimal("400.00")]


@pytest.mark.django_db
def test_a_client_with_an_hourly_escrow_cap_takes_the_full_path(server_client, spied_full_path):
    # given a client whose escrow is capped at 1000.00 an hour
    _funded("a", "b")
    server_client.hourly_escrow_cap = Decimal("1000.00")
    server_client.save(update_fields=["hourly_escrow_cap"])

    # when
    _open(server_client)

    # then the full path recorded the take against the cap
    assert spied_full_path == ["g"]
    assert list(ClientEscrowTake.objects.values_list("amount", flat=True)) == [2 * STAKE]


@pytest.mark.django_db
def test_a_client_seating_paired_players_only_takes_the_full_path(server_client, spied_full_path):
    # given a client that may seat only players of payments clients it is paired with (none)
    _funded("a", "b")
    server_client.paired_players_only = True
    server_client.save(update_fields=["paired_players_only"])
    written = _Written("a", "b")

    # when
    with pytest.raises(PlayerNotPaired) as refused:
        _open(server_client)

    # then the full path refused both players, and nothing was written
    assert spied_full_path == ["g"]
    assert refused.value.details == {"players": ["a", "b"]}
    written.none()


# --- real concurrent connections ----------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_one_game_id_opened_on_three_connections_at_once_opens_once(server_client):
    _funded("a", "b")

    outcomes = run_in_threads(lambda n: _open(server_client), 3)

    opened = [o for o in outcomes if isinstance(o, Game)]
    assert len(opened) == 1, outcomes
    assert all(isinstance(o, GameExists) for o in outcomes if o not in opened), outcomes
    assert escrow_balance(Game.objects.get()) == 2 * STAKE
    assert _deposits("a", "b") == [Decimal("420.00")] * 2
    assert ledger_violations() == []


@pytest.mark.django_db(transaction=True)
def test_a_players_last_stake_wanted_by_two_games_at_once_goes_to_one(server_client):
    # given a with one stake's worth, wanted by two games opening at once
    _funded("a", amount="100.00")
    _funded("b", "c")

    def open_one(n: int) -> Game:
        return _open(server_client, game_id=f"g{n}", players=("a", "bc"[n]))

    # when
    outcomes = run_in_threads(open_one, 2)

    # then one game opened; the other is refused naming a, with nothing of it written
    opened = [o for o in outcomes if isinstance(o, Game)]
    [refused] = [o for o in outcomes if not isinstance(o, Game)]
    assert len(opened) == 1 and isinstance(refused, PlayersShort), outcomes
    assert refused.details["players"] == ["a"]
    assert Game.objects.count() == 1
    assert _deposits("a") == [Decimal("20.00")]
    assert ledger_violations() == []
