"""`opening.game_open`: a game's opening, one path whatever the players and the client. Every
player's stake is collected into the new escrow or none is (the refusal names everyone short); a
player not registered yet is registered, bonus an entry may take is spent from its lots, a
client's pairings and hourly escrow cap are checked, all in the opening's one transaction. The
API layer claims the Idempotency-Key around it (a replay through the API at the end)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from djmoney.money import Money

from rummy_ledger.api.models import IdempotencyRecord
from rummy_ledger.errors import DomainError
from tests.builders import bonus_granted, escrow_balance, funded_player, make_api, template
from tests.concurrency import run_in_threads
from tests.tournaments.games.services.tables import POINTS, POOL, templates
from tests.wallets.invariants import ledger_violations
from tournaments.errors import GameErrorCode, GameExists, OpenRejected
from tournaments.games.services import opening
from tournaments.games.services.escrow import PlayersShort
from tournaments.models import Game, GamePlayer
from wallets.errors import ClientCapReached, PlayerNotPaired, RealMoneyUnavailable, SelfExcluded
from wallets.models import (
    CHIPS,
    Account,
    BonusLot,
    BonusSpend,
    Bucket,
    ClientEscrowTake,
    ClientPairing,
    Player,
    PlayerClient,
    Transfer,
)
from wallets.services.deposits import chips_grant
from wallets.services.protection import self_exclusion_start

STAKE = Decimal("80.00")  # points-1: 80 points of 1.00


def _funded(*players: str, amount: str = "500.00") -> None:
    templates()
    for player in players:
        funded_player(player, amount)


def _open(client, game_id: str = "g", players=("a", "b"), slug: str = POINTS) -> Game:
    # a savepoint of the test's own, as the API layer's transaction would end: a refusal leaves
    # the test's transaction usable
    with transaction.atomic():
        game, _ = opening.game_open(
            client=client, game_id=game_id, template_slug=slug, players=list(players)
        )
    return game


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
                Transfer.objects.count(), IdempotencyRecord.objects.count(),
                ClientEscrowTake.objects.count(), BonusSpend.objects.count())  # fmt: skip

    def none(self) -> None:
        assert self._counts() == self.counts
        assert _deposits(*self.players) == self.deposits


@pytest.mark.django_db
def test_an_opening_collects_every_stake_in_two_round_trips(server_client):
    # given three funded players
    _funded("a", "b", "c")

    # when a points game opens for them
    with CaptureQueriesContext(connection) as sent:
        game, seated = opening.game_open(
            client=server_client, game_id="g", template_slug=POINTS, players=["a", "b", "c"]
        )

    # then one read and one write: the game, its escrow holding every stake, the seats in order
    statements = [q["sql"] for q in sent.captured_queries if "SAVEPOINT" not in q["sql"]]
    assert len(statements) == 2  # its transaction's savepoint aside
    assert [s.player.external_id for s in seated] == ["a", "b", "c"]
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
        _open(server_client, players=("a", "b", "c"))

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
        _open(server_client, players=players, slug=slug)

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
def test_a_self_excluded_player_is_refused(server_client):
    # given b self-excluded for a week
    _funded("a", "b")
    self_exclusion_start(player_external_id="b", days=7, changed_by="test")
    written = _Written("a", "b")

    # when
    with pytest.raises(SelfExcluded) as refused:
        _open(server_client)

    # then b is named (the read brought the exclusion along), and nothing was written
    assert [e["player"] for e in refused.value.details["players"]] == ["b"]
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


# --- what used to take a slower twin: the same path -------------------------------------------


@pytest.mark.django_db
def test_a_player_not_registered_is_registered_and_rolled_back_with_the_refusal(server_client):
    # given b never registered (no money either)
    _funded("a")
    written = _Written("a")

    # when
    with pytest.raises(PlayersShort) as refused:
        _open(server_client)

    # then b was registered, found short, and everything rolled back: b too
    assert refused.value.details["players"] == ["b"]
    assert not Player.objects.filter(external_id="b").exists()
    written.none()


@pytest.mark.django_db
def test_a_player_id_outside_the_safe_alphabet_is_refused_and_nothing_is_written(server_client):
    _funded("a")
    written = _Written("a")

    with pytest.raises(DomainError) as refused:
        _open(server_client, players=("a", "b c"))

    assert refused.value.details == {"player": "b c"}
    assert not Player.objects.filter(external_id="b c").exists()
    written.none()


@pytest.mark.django_db
def test_bonus_an_entry_may_take_is_spent_from_its_lots(server_client):
    # given a with 50.00 of bonus, which a pool entry of 100.00 may take 10.00 of (its cap)
    _funded("a", "b")
    bonus_granted("a", "50.00")

    # when
    game = _open(server_client, slug=POOL)

    # then 10.00 of a's lot was spent and recorded for its refund, the rest from deposits
    assert BonusLot.objects.get(player__external_id="a").remaining == Decimal("40.00")
    assert [s.amount for s in BonusSpend.objects.all()] == [Decimal("10.00")]
    assert escrow_balance(game) == Decimal("200.00")
    assert _deposits("a", "b") == [Decimal("410.00"), Decimal("400.00")]
    seat = GamePlayer.objects.get(game=game, seat=1)
    assert seat.contributed == [["bonus", "10.00"], ["deposit", "90.00"]]
    assert ledger_violations() == []


@pytest.mark.django_db
def test_bonus_is_not_spent_when_the_opening_is_refused(server_client):
    # given a with bonus, and c short
    _funded("a", "b")
    _funded("c", amount="0")
    bonus_granted("a", "50.00")
    written = _Written("a", "b", "c")

    # when
    with pytest.raises(PlayersShort):
        _open(server_client, players=("a", "c"), slug=POOL)

    # then a's lot is whole again
    assert BonusLot.objects.get(player__external_id="a").remaining == Decimal("50.00")
    written.none()


def _capped(client, cap: str) -> None:
    client.hourly_escrow_cap = Decimal(cap)
    client.save(update_fields=["hourly_escrow_cap"])


@pytest.mark.django_db
def test_a_client_with_an_hourly_escrow_cap_records_the_take(server_client):
    # given a client whose escrow is capped at 1000.00 an hour
    _funded("a", "b")
    _capped(server_client, "1000.00")

    # when
    _open(server_client)

    # then the take is recorded against the cap
    assert list(ClientEscrowTake.objects.values_list("amount", flat=True)) == [2 * STAKE]


@pytest.mark.django_db
def test_an_opening_past_the_hourly_escrow_cap_is_refused_and_nothing_is_written(server_client):
    # given a cap of 200.00 an hour, 160.00 of it taken by a first game
    _funded("a", "b", "c", "d")
    _capped(server_client, "200.00")
    _open(server_client)
    written = _Written("a", "b", "c", "d")

    # when a second game would take 160.00 more
    with pytest.raises(ClientCapReached) as refused:
        _open(server_client, game_id="g2", players=("c", "d"))

    # then
    assert refused.value.details == {"cap": "200.00", "taken": "160.00", "amount": "160.00"}
    written.none()


@pytest.mark.django_db
def test_a_client_seating_paired_players_only_refuses_the_others(server_client):
    # given a client that may seat only players of payments clients it is paired with (none)
    _funded("a", "b")
    server_client.paired_players_only = True
    server_client.save(update_fields=["paired_players_only"])
    written = _Written("a", "b")

    # when
    with pytest.raises(PlayerNotPaired) as refused:
        _open(server_client)

    # then both players are named, and nothing was written
    assert refused.value.details == {"players": ["a", "b"]}
    written.none()


@pytest.mark.django_db
def test_a_client_seating_paired_players_only_seats_its_payments_clients_players(server_client):
    # given a paired with the client's payments client, b reported by another one
    _funded("a", "b", "c")
    server_client.paired_players_only = True
    server_client.save(update_fields=["paired_players_only"])
    ours, theirs = make_api("payments", name="ours")[1], make_api("payments", name="theirs")[1]
    ClientPairing.objects.create(games_client=server_client, payments_client=ours)
    PlayerClient.objects.create(player=Player.objects.get(external_id="a"), client=ours)
    PlayerClient.objects.create(player=Player.objects.get(external_id="c"), client=ours)
    PlayerClient.objects.create(player=Player.objects.get(external_id="b"), client=theirs)

    # when b is seated, then a and c
    with pytest.raises(PlayerNotPaired) as refused:
        _open(server_client, players=("a", "b"))
    game = _open(server_client, players=("a", "c"))

    # then b alone was named; a and c play
    assert refused.value.details == {"players": ["b"]}
    assert escrow_balance(game) == 2 * STAKE


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


@pytest.mark.django_db(transaction=True)
def test_two_openings_at_once_that_the_hourly_cap_holds_one_of_open_one(server_client):
    # given a cap of 200.00 an hour, and two games of 160.00 each opening at once
    _funded("a", "b", "c", "d")
    _capped(server_client, "200.00")

    def open_one(n: int) -> Game:
        return _open(server_client, game_id=f"g{n}", players=(("a", "b"), ("c", "d"))[n])

    # when
    outcomes = run_in_threads(open_one, 2)

    # then the cap counted the first take: one game opened, the other was refused with nothing
    # of it written
    opened = [o for o in outcomes if isinstance(o, Game)]
    [refused] = [o for o in outcomes if not isinstance(o, Game)]
    assert len(opened) == 1 and isinstance(refused, ClientCapReached), outcomes
    assert refused.details == {"cap": "200.00", "taken": "160.00", "amount": "160.00"}
    assert list(ClientEscrowTake.objects.values_list("amount", flat=True)) == [2 * STAKE]
    assert Game.objects.count() == 1 and Transfer.objects.filter(kind="entry").count() == 2
    assert ledger_violations() == []


# --- through the API: the key ---------------------------------------------------------------------


@pytest.mark.django_db
def test_an_opening_repeated_with_its_key_replays_the_first_answer_and_opens_once():
    # given a game server and two funded players
    api, client = make_api("games", name="game-server-2")
    _funded("a", "b")
    body = {"game_id": "g", "template": POINTS, "players": ["a", "b"]}

    def post(sent: dict):
        return api.post("/api/v1/games", sent, format="json", HTTP_IDEMPOTENCY_KEY="open-1")

    # when the opening is sent twice, then once more with another body
    first, again = post(body), post(body)
    other = post({**body, "game_id": "g2"})

    # then the repeat is the first answer, byte for byte, and one game holds the stakes
    assert first.status_code == again.status_code == 201
    assert again.content == first.content and again["Idempotent-Replayed"] == "true"
    assert first.json()["collected"] == "160.00"
    assert [p["player"] for p in first.json()["players"]] == ["a", "b"]
    assert other.status_code == 409 and other.json()["error"]["code"] == "idempotency_conflict"
    assert Game.objects.filter(client=client).count() == 1
    assert _deposits("a", "b") == [Decimal("420.00")] * 2
