"""The guards of a games client, over real HTTP (docs/trust-model.md): seat only the players of the
payments clients it is paired with (403 `player_not_paired`), and take at most a cap into escrow
in a rolling hour (409 `client_cap`), concurrent opens included."""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest
import requests

from rummy_ledger.api.models import ApiClient
from tests.api.conftest import ledger_state
from tests.builders import LOSER_80, WILD, WINNER, HttpApi, res, template
from tests.tournaments.tournament_builders import Lobby, scheduled
from wallets.models import ClientPairing

pytestmark = pytest.mark.django_db(transaction=True)


class Client(HttpApi):
    def __init__(self, base_url: str, name: str, scope: str):
        super().__init__(base_url, scope, name=name)
        self.model = self.client

    def guard(self, **fields) -> None:
        ApiClient.objects.filter(pk=self.model.pk).update(**fields)


@pytest.fixture
def clients(live_server, eager):
    template("points-1", "points", point_value=Decimal("1.00"))
    games = Client(live_server.url, "game-server", "games")
    ours = Client(live_server.url, "our-gateway", "payments")
    theirs = Client(live_server.url, "other-gateway", "payments")
    for gateway, players in ((ours, ("a", "b", "c", "d")), (theirs, ("x", "y"))):
        for player in players:
            body = {"amount": "1280.00", "reference": f"dep-{player}"}
            assert gateway.post(f"players/{player}/deposits", body).status_code == 201
    return games, ours, theirs


def _open(games: Client, game_id: str, players: list[str]) -> requests.Response:
    return games.post("games", {"game_id": game_id, "template": "points-1", "players": players})


def test_without_the_guard_any_player_can_be_seated(clients):
    games, _, _ = clients

    assert _open(games, "g1", ["a", "x"]).status_code == 201


def test_with_the_guard_only_players_of_paired_payments_clients_are_seated(clients):
    games, ours, _ = clients
    games.guard(paired_players_only=True)
    ClientPairing.objects.create(games_client=games.model, payments_client=ours.model)
    before = ledger_state()

    refused = _open(games, "g1", ["a", "x", "never-seen"])

    assert refused.status_code == 403, refused.text
    error = refused.json()["error"]
    assert error["code"] == "player_not_paired"
    assert error["details"] == {"players": ["x", "never-seen"]}
    assert ledger_state() == before
    assert _open(games, "g2", ["a", "b"]).status_code == 201


def test_a_player_reported_by_a_kyc_of_a_paired_client_is_theirs_too(clients):
    games, _, theirs = clients
    games.guard(paired_players_only=True)
    ClientPairing.objects.create(games_client=games.model, payments_client=theirs.model)
    kyc = {"pan": "ABCDE1234F", "status": "verified", "reference": "kyc-a"}
    assert theirs.post("players/a/kyc", kyc).status_code == 201

    assert _open(games, "g1", ["a", "x"]).status_code == 201


def test_the_hourly_cap_refuses_what_would_pass_it_and_writes_nothing(clients):
    games, _, _ = clients
    games.guard(hourly_escrow_cap=Decimal("200.00"))  # a 2-player table takes 160
    assert _open(games, "g1", ["a", "b"]).status_code == 201
    before = ledger_state()

    refused = _open(games, "g2", ["c", "d"])

    assert refused.status_code == 409, refused.text
    error = refused.json()["error"]
    assert error["code"] == "client_cap"
    assert error["details"] == {"cap": "200.00", "taken": "160.00", "amount": "160.00"}
    assert ledger_state() == before


def test_concurrent_opens_together_stay_within_the_cap(clients):
    games, _, _ = clients
    games.guard(hourly_escrow_cap=Decimal("320.00"))  # room for two tables of 160
    tables = [["a", "b"], ["c", "d"], ["x", "y"], ["a", "c"]]
    statuses: list[int] = []
    start = threading.Barrier(len(tables))

    def open_table(n: int) -> None:
        start.wait()
        statuses.append(_open(games, f"race-{n}", tables[n]).status_code)

    threads = [threading.Thread(target=open_table, args=(n,)) for n in range(len(tables))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(statuses) == [201, 201, 409, 409], statuses


def test_a_rejoin_counts_against_the_cap(clients):
    games, _, _ = clients
    template("pool-101", "pool101", entry_fee=Decimal("100.00"), rejoin_allowed=True)
    games.guard(hourly_escrow_cap=Decimal("350.00"))
    opened = {"game_id": "pool", "template": "pool-101", "players": ["a", "b", "c"]}
    assert games.post("games", opened).status_code == 201  # 300 taken
    win = res("a", "declared", WINNER)
    for deal_no, b_result in ((1, res("b", "lost", LOSER_80)), (2, res("b", "wrong_show"))):
        deal = {"deal_no": deal_no, "wild_joker": WILD, "results": [win, b_result]}
        deal["results"].append(res("c", "first_drop"))
        assert games.post("games/pool/deals", deal).status_code == 202  # b: 160, eliminated
    before = ledger_state()

    refused = games.post("games/pool/rejoin", {"player": "b"})

    assert refused.status_code == 409, refused.text
    assert refused.json()["error"]["details"] == {
        "cap": "350.00",
        "taken": "300.00",
        "amount": "100.00",
    }
    assert ledger_state() == before
    games.guard(hourly_escrow_cap=Decimal("400.00"))
    assert games.post("games/pool/rejoin", {"player": "b"}).status_code == 200


def test_a_rejoin_pays_only_for_a_player_still_paired(clients):
    """A rejoin takes the entry from the player's wallet again: a pairing removed since the
    opening refuses it (403), with nothing written."""
    games, ours, _ = clients
    template("pool-101", "pool101", entry_fee=Decimal("100.00"), rejoin_allowed=True)
    games.guard(paired_players_only=True)
    pairing = ClientPairing.objects.create(games_client=games.model, payments_client=ours.model)
    opened = {"game_id": "pool", "template": "pool-101", "players": ["a", "b", "c"]}
    assert games.post("games", opened).status_code == 201
    win = res("a", "declared", WINNER)
    for deal_no, b_result in ((1, res("b", "lost", LOSER_80)), (2, res("b", "wrong_show"))):
        deal = {"deal_no": deal_no, "wild_joker": WILD, "results": [win, b_result]}
        deal["results"].append(res("c", "first_drop"))
        assert games.post("games/pool/deals", deal).status_code == 202  # b: 160, eliminated
    pairing.delete()
    before = ledger_state()

    refused = games.post("games/pool/rejoin", {"player": "b"})

    assert refused.status_code == 403, refused.text
    assert refused.json()["error"]["code"] == "player_not_paired"
    assert refused.json()["error"]["details"] == {"players": ["b"]}
    assert ledger_state() == before
    ClientPairing.objects.create(games_client=games.model, payments_client=ours.model)
    assert games.post("games/pool/rejoin", {"player": "b"}).status_code == 200


def test_tournament_entries_count_against_the_same_cap(clients, live_server):
    lobby = Lobby(live_server.url)  # the tournament's client
    scheduled()  # entry 100.00, to players of any payments client
    ApiClient.objects.filter(pk=lobby.client.pk).update(hourly_escrow_cap=Decimal("260.00"))
    assert [lobby.register("sunday-100", p)[0] for p in ("a", "b")] == [201, 201]
    before = ledger_state()

    status, refused = lobby.register("sunday-100", "c")

    assert status == 409, refused
    assert refused["error"]["code"] == "client_cap"
    assert refused["error"]["details"] == {"cap": "260.00", "taken": "200.00", "amount": "100.00"}
    assert ledger_state() == before
