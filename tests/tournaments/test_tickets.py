"""Tickets and satellites over real HTTP, the satellite's prizes paid by a real Celery worker:
a ₹10 satellite of 20 players pays 2 seats in a ₹100 target (15 % fee: ₹170 after the fee, a
₹200 guarantee covering the 2 seats, overlay ₹30); a winner registers in the target with its
ticket, unregisters (the ticket back) and registers again; the other's unused ticket is
refunded to winnings at the target's start; a cancelled target refunds its tickets."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from tests.builders import funded_player
from tests.tournaments.tournament_builders import Lobby, scheduled, table
from tests.tournaments.worker import Worker, private_queue, wait_until
from tests.wallets.invariants import ledger_violations
from tournaments.games.services.escrow import fee_account_id
from tournaments.tournaments.queries import tournament_pnl_rows
from tournaments.tournaments.services.tickets import tickets_outstanding
from wallets.models import PlatformAccount
from wallets.reconciliation.runner import reconcile_run
from wallets.services.accounts import platform_accounts

pytestmark = pytest.mark.django_db(transaction=True)
D = Decimal
SATELLITE = [{"ranks": "1-2", "kind": "ticket", "tournament": "main-100"}]


@pytest.fixture
def lobby(live_server):
    return Lobby(live_server.url)


def winnings(player: str) -> Decimal:
    return funded_player(player, "0")["winnings"].balance.amount


def deposit(player: str) -> Decimal:
    return funded_player(player, "0")["deposit"].balance.amount


def target(**overrides):
    return scheduled(
        slug="main-100", rebuy=None, guarantee="0.00", min_players=2, max_players=6,
        rounds=[{"final": True}], prizes=[{"ranks": "1", "percent": "100.00"}], **overrides,
    )  # fmt: skip


def satellite(slug: str = "sat-10"):
    return scheduled(
        slug=slug, entry_fee="10.00", guarantee="200.00", rebuy=None, min_players=3,
        rounds=[{"qualify_top": 1}, {"final": True}], prizes=SATELLITE,
    )  # fmt: skip


def satellite_played(lobby, winners: tuple[str, str], slug: str = "sat-10") -> None:
    """20 players in four tables of five; the final's first two are `winners`."""
    players = [f"s{n:02d}" for n in range(20)]
    for p in players:
        funded_player(p, "50.00")
        assert lobby.register(slug, p)[0] == 201
    assert lobby.start(slug)[1]["status"] == "running"
    rest = [p for p in players if p not in winners]
    seated = [winners[0], *rest[:4], winners[1], *rest[4:]]  # the winners lead two tables
    tables = [seated[i : i + 5] for i in range(0, 20, 5)]
    firsts = [t[0] for t in tables]
    r1 = [
        table(f"T{n}", *((p, i + 1, 100 - i) for i, p in enumerate(t)))
        for n, t in enumerate(tables)
    ]
    assert lobby.round(slug, 1, r1)[0] == 202
    final = [table("F", *((p, i + 1, 0) for i, p in enumerate(firsts)))]
    assert lobby.round(slug, 2, final)[0] == 202


def test_the_satellite_pays_two_seats_used_given_back_and_refunded(lobby):
    target()
    satellite()
    with private_queue() as queue:
        worker = Worker(queue)
        try:
            satellite_played(lobby, ("s00", "s05"))
            assert wait_until(lambda: lobby.get("sat-10")[1]["settled"], timeout=90)
        finally:
            worker.stop()
    t = lobby.get("sat-10")[1]
    assert (t["status"], t["collected"], t["fee"], t["prize_pool"], t["overlay"]) == (
        "finished", "200.00", "30.00", "200.00", "30.00",
    )  # fmt: skip
    assert t["prizes"][0] == {"rank_from": 1, "rank_to": 2, "amount": "100.00"}
    status, body = lobby.tickets("s00")
    assert status == 200, body
    [ticket] = body["tickets"]
    expires = lobby.get("main-100")[1]
    assert ticket["tournament"] == "main-100" and ticket["value"] == "100.00"
    assert (ticket["currency"], ticket["status"], ticket["source"]) == (
        "INR", "active", "satellite",
    )  # fmt: skip
    assert set(ticket) == {"id", "tournament", "value", "currency", "status", "source",
                           "expires_at"}  # fmt: skip
    assert expires["status"] == "registering"
    assert winnings("s00") == winnings("s05") == D("0.00")
    assert tickets_outstanding("INR") == (D("200.00"), D("200.00"))

    # s00 registers with the ticket, unregisters (the ticket back), registers again
    status, body = lobby.register("main-100", "s00")
    assert (status, body["paid"]) == (201, {"ticket": "100.00"}), body
    assert lobby.tickets("s00")[1]["tickets"][0]["status"] == "used"
    assert lobby.unregister("main-100", "s00")[1]["paid"] == {"ticket": "100.00"}
    assert lobby.tickets("s00")[1]["tickets"][0]["status"] == "active"
    assert lobby.register("main-100", "s00")[1]["paid"] == {"ticket": "100.00"}
    # a paying player; "pay_with": "money" pays money and keeps the ticket
    funded_player("m1", "300.00")
    assert lobby.register("main-100", "m1")[1]["paid"] == {"deposit": "100.00"}
    assert tickets_outstanding("INR") == (D("100.00"), D("100.00"))
    m = lobby.get("main-100")[1]
    assert (m["collected"], m["fee"], m["prize_pool"]) == ("200.00", "30.00", "170.00")

    # the start refunds s05's unused ticket to its winnings
    assert lobby.start("main-100")[1]["status"] == "running"
    assert winnings("s05") == D("100.00")
    statuses = {p: lobby.tickets(p)[1]["tickets"][0]["status"] for p in ("s00", "s05")}
    assert statuses == {"s00": "used", "s05": "refunded"}
    # the cancel refunds the used ticket to winnings too
    assert lobby.cancel("main-100")[1]["status"] == "cancelled"
    assert winnings("s00") == D("100.00")
    assert lobby.tickets("s00")[1]["tickets"][0]["status"] == "refunded"
    assert deposit("m1") == D("300.00")
    assert tickets_outstanding("INR") == (D("0.00"), D("0.00"))
    assert ledger_violations() == []
    assert reconcile_run(trigger="command").status == "clean"
    # the P&L: entries 20 x 10 + the ticket twice + m1's 100; refunds the unregistration and
    # the cancel's two; the seats are prizes
    promotions = platform_accounts()[PlatformAccount.PROMOTIONS].pk
    [row] = tournament_pnl_rows(
        by="day", fee_account_id=fee_account_id(), overlay_account_ids=[promotions],
        start=timezone.now() - timedelta(days=1), end=timezone.now() + timedelta(days=1),
    )  # fmt: skip
    assert {k: row[k] for k in ("entries", "refunds", "prizes", "fee", "overlay")} == {
        "entries": D("500.00"), "refunds": D("300.00"), "prizes": D("200.00"),
        "fee": D("30.00"), "overlay": D("30.00"),
    }  # fmt: skip


def test_pay_with_money_keeps_the_ticket_and_another_client_sees_none(lobby, eager):
    target()
    satellite()
    satellite_played(lobby, ("s00", "s05"))
    funded_player("s00", "200.00")
    status, body = lobby.call("POST", "/main-100/registrations",
                              {"player": "s00", "pay_with": "money"})  # fmt: skip
    assert (status, body["paid"]) == (201, {"deposit": "100.00"})
    assert lobby.tickets("s00")[1]["tickets"][0]["status"] == "active"
    other = Lobby(lobby.root.rsplit("/api/", 1)[0], name="other")
    assert other.tickets("s00") == (200, {"tickets": [], "next": None})
    status, body = lobby.call("POST", "/main-100/registrations",
                              {"player": "s05", "pay_with": "ticket"})  # fmt: skip
    assert status == 400, body
    # s00 is registered: a second satellite pays its seat in money instead
    satellite("sat-10b")
    satellite_played(lobby, ("s00", "s07"), slug="sat-10b")
    assert winnings("s00") == D("100.00")
    held = lobby.tickets("s00")[1]["tickets"]
    assert [t["status"] for t in held] == ["active"]
    assert [t["status"] for t in lobby.tickets("s07")[1]["tickets"]] == ["active"]
    assert ledger_violations() == []
    assert reconcile_run(trigger="command").status == "clean"
