"""Tournaments through real HTTP (the live test server): every endpoint and refusal, the money
in and out by bucket and bonus lot, prizes with a tie, cancellation refunds."""

from decimal import Decimal

import pytest
from django.db.models import Sum

from tests.builders import bonus_granted, funded_player
from tests.tournaments.tournament_builders import Lobby, scheduled, table
from tests.wallets.invariants import ledger_violations
from tournaments.models import Registration, Tournament, TournamentEscrow
from wallets.models import BonusLot, Entry
from wallets.reconciliation.runner import reconcile_run
from wallets.services.protection import self_exclusion_start

pytestmark = pytest.mark.django_db(transaction=True)
D = Decimal


def balances(player: str) -> dict[str, Decimal]:
    return {a.bucket: a.balance.amount for a in funded_player(player, "0").values()}


@pytest.fixture
def lobby(live_server, eager):
    return Lobby(live_server.url)


def test_a_cash_tournament_from_registration_to_prizes(lobby):
    scheduled()
    players = [f"p{n}" for n in range(1, 10)]
    for p in players:
        funded_player(p, "1000.00")
    bonus_granted("p1", "30.00")
    status, body = lobby.register("sunday-100", "p1")
    assert status == 201, body
    # bonus at most 10 % of the entry, then deposit
    assert body == {
        "tournament": "sunday-100",
        "player": "p1",
        "paid": {"bonus": "10.00", "deposit": "90.00"},
        "players": 1,
    }
    for p in players[1:]:
        assert lobby.register("sunday-100", p)[0] == 201
    # p9 unregisters: the entry back where it came from
    before = balances("p9")
    status, body = lobby.unregister("sunday-100", "p9")
    assert status == 200 and body["players"] == 8
    assert balances("p9")["deposit"] == before["deposit"] + 100
    status, t = lobby.start("sunday-100")
    assert (status, t["status"], t["round"], t["players"]) == (200, "running", 1, 8)
    assert lobby.rebuy("sunday-100", "p2")[0] == 201
    assert lobby.rebuy("sunday-100", "p9")[1]["error"]["code"] == "not_registered"
    assert t["rounds"][0] == {"round": 1, "status": "playing", "entrants": 8, "qualified": None}
    # round 1: two tables of four, the first two of each qualify; p7 and p8 tie on chips
    r1 = [
        table("A", ("p1", 1, 900), ("p2", 2, 500), ("p3", 3, 300), ("p4", 4, 100)),
        table("B", ("p5", 1, 800), ("p6", 2, 600), ("p7", 3, 300), ("p8", 4, 50)),
    ]
    status, body = lobby.round("sunday-100", 1, r1)
    assert (status, body) == (202, {"tournament": "sunday-100", "round": 1, "status": "stored"})
    final = [table("F", ("p5", 1, 4000), ("p1", 2, 0), ("p2", 3, 0), ("p6", 4, 0))]
    status, body = lobby.rebuy("sunday-100", "p1")
    assert (status, body["error"]["code"]) == (409, "rebuy_closed")  # round 2 > until_round
    assert lobby.round("sunday-100", 2, final)[0] == 202
    status, t = lobby.get("sunday-100")
    # collected 8 x 100 + 50 = 850; fee 15 % = 127.50; pool 722.50 (over the 500 guarantee)
    assert (t["status"], t["collected"], t["fee"], t["prize_pool"], t["overlay"]) == (
        "finished", "850.00", "127.50", "722.50", "0.00",
    )  # fmt: skip
    # 25 % of 722.50 is 180.625: the leftover paisa goes to the better rank
    assert t["prizes"] == [
        {"rank_from": 1, "rank_to": 1, "amount": "361.25"},
        {"rank_from": 2, "rank_to": 2, "amount": "180.63"},
        {"rank_from": 3, "rank_to": 3, "amount": "180.62"},
    ]
    results = {r["player"]: (r["rank"], r["prize"]) for r in t["results"]}
    assert (results["p5"], results["p1"], results["p2"]) == (
        (1, "361.25"), (2, "180.63"), (3, "180.62"),
    )  # fmt: skip
    # p3 and p7 tie on 300 chips at ranks 5-6: both rank 5, nothing paid past rank 3
    assert results["p3"] == results["p7"] == (5, "0.00")
    assert t["settled"] is True and t["round"] is None
    paid = sum(D(p) for _, p in results.values())
    assert paid + D(t["fee"]) == D(t["collected"]) + D(t["overlay"])
    assert balances("p5")["winnings"] == D("361.25")
    assert ledger_violations() == []
    assert reconcile_run(trigger="command").status == "clean"


def test_refusals(lobby, settings):
    scheduled(
        max_players=4,
        min_players=2,
        rounds=[{"qualify_min_chips": 5}, {"qualify_top": 1}, {"final": True}],
        rebuy={"price": "50.00", "max_per_player": 2, "until_round": 2},
        prizes=[{"ranks": "1", "percent": "100.00"}],
    )
    for p in ("a", "b", "c", "d", "e"):
        funded_player(p, "1000.00")
    funded_player("poor", "40.00")
    assert lobby.register("sunday-100", "a")[0] == 201
    status, body = lobby.register("sunday-100", "a")
    assert (status, body["error"]["code"]) == (409, "already_registered")
    status, body = lobby.register("sunday-100", "poor")
    assert (status, body["error"]["code"]) == (409, "insufficient_funds")
    assert body["error"]["details"]["shortfall"] == "60.00"
    assert not Registration.objects.filter(player__external_id="poor").exists()
    self_exclusion_start(player_external_id="excluded", days=30, changed_by="test")
    funded_player("excluded", "0")
    assert lobby.register("sunday-100", "excluded")[1]["error"]["code"] == "self_excluded"
    settings.REAL_MONEY = "off"
    status, body = lobby.register("sunday-100", "b")
    assert (status, body["error"]["code"]) == (409, "real_money_unavailable")
    assert lobby.get("sunday-100")[1]["available"] is False
    settings.REAL_MONEY = "on"
    for p in ("b", "c", "d"):
        assert lobby.register("sunday-100", p)[0] == 201
    status, body = lobby.register("sunday-100", "e")
    assert (status, body["error"]["code"]) == (409, "tournament_full")
    status, body = lobby.unregister("sunday-100", "e")
    assert (status, body["error"]["code"]) == (409, "not_registered")
    status, body = lobby.call("POST", "/sunday-100/registrations", {"player": "e", "x": 1})
    assert (status, body["error"]["code"]) == (400, "invalid")
    status, body = lobby.round("sunday-100", 1, [table("A", ("a", 1, 5))])
    assert (status, body["error"]["code"]) == (409, "round_invalid")
    assert lobby.start("sunday-100")[0] == 200
    assert lobby.start("sunday-100")[1]["error"]["code"] == "tournament_state"
    status, body = lobby.unregister("sunday-100", "a")
    assert (status, body["error"]["code"]) == (409, "registration_closed")
    assert lobby.register("sunday-100", "e")[1]["error"]["code"] == "registration_closed"
    # standings: an entrant missing, then nobody qualified, then a good round and a rival
    status, body = lobby.round("sunday-100", 1, [table("A", ("a", 1, 5), ("b", 2, 5))])
    assert (status, body["error"]["code"]) == (422, "round_rejected")
    none = [table("A", ("a", 1, 4), ("b", 2, 4)), table("B", ("c", 1, 4), ("d", 2, 1))]
    assert lobby.round("sunday-100", 1, none)[0] == 422
    twice = [table("A", ("a", 1, 9), ("b", 2, 8)), table("A", ("c", 1, 7), ("d", 2, 1))]
    status, body = lobby.round("sunday-100", 1, twice)
    assert (status, body["error"]["code"]) == (422, "round_rejected")
    assert body["error"]["details"] == {"table": "A"}
    four = [table("A", ("a", 1, 9), ("b", 2, 8)), table("B", ("c", 1, 7), ("d", 2, 1))]
    assert lobby.round("sunday-100", 1, four, key="r1")[0] == 202
    assert lobby.round("sunday-100", 1, four)[0] == 202  # the same content replays
    other = [table("A", ("b", 1, 9), ("a", 2, 8)), table("B", ("c", 1, 7), ("d", 2, 1))]
    assert lobby.round("sunday-100", 1, other)[1]["error"]["code"] == "round_exists"
    status, body = lobby.rebuy("sunday-100", "d")
    assert (status, body["error"]["code"]) == (409, "rebuy_not_allowed")  # knocked out
    assert lobby.rebuy("sunday-100", "a")[0] == 201  # round 2, still in
    # another client's tournament does not exist for it
    other_lobby = Lobby(lobby.base.split("/api/")[0], name="other")
    assert other_lobby.get("sunday-100")[0] == 404
    assert other_lobby.register("sunday-100", "e")[0] == 404


def test_rebuy_limit_and_cancel_refunds_entries_and_rebuys_to_their_buckets(lobby):
    scheduled(rebuy={"price": "50.00", "max_per_player": 1, "until_round": 1})
    for p in ("a", "b", "c", "d"):
        funded_player(p, "1000.00")
    bonus_granted("a", "30.00")
    lot = BonusLot.objects.get(player__external_id="a")
    expires = lot.expires_at
    before = {p: balances(p) for p in ("a", "b", "c", "d")}
    for p in ("a", "b", "c", "d"):
        assert lobby.register("sunday-100", p)[0] == 201
    assert lobby.start("sunday-100")[1]["status"] == "running"
    assert lobby.rebuy("sunday-100", "a")[0] == 201
    status, body = lobby.rebuy("sunday-100", "a")
    assert (status, body["error"]["code"]) == (409, "rebuy_limit")
    assert lobby.get("sunday-100")[1]["collected"] == "450.00"
    status, t = lobby.cancel("sunday-100")
    assert (status, t["status"], t["fee"], t["overlay"]) == (200, "cancelled", "0.00", "0.00")
    assert {p: balances(p) for p in before} == before
    lot.refresh_from_db()
    assert (lot.remaining, lot.expires_at) == (D("30.00"), expires)
    assert lobby.cancel("sunday-100")[1]["error"]["code"] == "tournament_state"
    assert lobby.get()[1] == {"tournaments": []}
    assert reconcile_run(trigger="command").status == "clean"


def test_start_below_the_minimum_cancels_and_refunds(lobby):
    scheduled(min_players=4)
    for p in ("a", "b"):
        funded_player(p, "1000.00")
        assert lobby.register("sunday-100", p)[0] == 201
    status, t = lobby.start("sunday-100")
    assert (status, t["status"], t["collected"]) == (200, "cancelled", "200.00")
    assert balances("a")["deposit"] == D("1000.00")
    tournament = Tournament.objects.get()
    assert tournament.refunded == tournament.collected == D("200.00")
    escrow = Entry.objects.filter(account_id__in=TournamentEscrow.objects.values("account_id"))
    assert escrow.aggregate(s=Sum("amount"))["s"] == 0


def test_a_chips_freeroll_with_a_guarantee_pays_the_overlay_from_chips_issuance(lobby):
    scheduled(
        slug="chips-free",
        currency="CHP",
        entry_fee="0.00",
        fee_percent="0.00",
        guarantee="1000.00",
        rebuy=None,
        rounds=[{"final": True}],
        max_players=6,
        min_players=3,
        prizes=[{"ranks": "1", "percent": "70.00"}, {"ranks": "2", "percent": "30.00"}],
    )
    for p in ("a", "b", "c"):
        assert lobby.register("chips-free", p)[0] == 201
    assert lobby.start("chips-free")[0] == 200
    final = [table("F", ("c", 1, 0), ("a", 2, 0), ("b", 3, 0))]
    assert lobby.round("chips-free", 1, final)[0] == 202
    t = lobby.get("chips-free")[1]
    assert (t["status"], t["overlay"], t["prize_pool"]) == ("finished", "1000.00", "1000.00")
    assert balances("c")["chips"] >= D("700.00")
    assert ledger_violations() == []
