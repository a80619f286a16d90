"""Builders for tournament tests: a tournament file, a scheduled tournament, a lobby client that
speaks real HTTP to the live test server."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
import uuid
from datetime import timedelta

from django.utils import timezone

from rummy_ledger.api.keys import api_client_create
from tests.builders import make_api
from tournaments.models import Tournament
from tournaments.tournaments.services.setup import tournament_create, tournament_fields_checked


def tournament_file(**overrides) -> dict:
    data = {
        "slug": "sunday-100",
        "name": "Sunday 100",
        "client": "lobby",
        "currency": "INR",
        "entry_fee": "100.00",
        "fee_percent": "15.00",
        "guarantee": "500.00",
        "min_players": 4,
        "max_players": 50,
        "table_size": 6,
        "registration_closes_at": (timezone.now() + timedelta(hours=1)).isoformat(),
        "bonus_cap_percent": "10.00",
        "rounds": [{"qualify_top": 2}, {"final": True}],
        "rebuy": {"price": "50.00", "max_per_player": 2, "until_round": 1},
        "prizes": [{"ranks": "1", "percent": "50.00"}, {"ranks": "2-3", "percent": "25.00"}],
    }
    data.update(overrides)
    return data


def scheduled(**overrides) -> Tournament:
    return tournament_create(
        spec=tournament_fields_checked(tournament_file(**overrides)), created_by="test"
    )


class Lobby:
    """The lobby over real HTTP (urllib against the live server); every write has a fresh key
    unless one is given. Returns (status, body)."""

    def __init__(self, base_url: str, name: str = "lobby"):
        self.client, self.key = api_client_create(name=name, scopes=["games"])
        self.root = base_url.rstrip("/") + "/api/v1"
        self.base = self.root + "/tournaments"

    def call(self, method: str, path: str = "", body=None, key: str | None = None, base=None):
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Api-Key {self.key}", "Content-Type": "application/json"}
        if method != "GET":
            headers["Idempotency-Key"] = key or uuid.uuid4().hex
        request = urllib.request.Request((base or self.base) + path, data, headers, method=method)
        for _ in range(50):  # the test server's listen queue is short: a refused connection is
            try:  # tried again with the same Idempotency-Key (a repeat replays)
                with urllib.request.urlopen(request, timeout=30) as response:
                    return response.status, json.loads(response.read() or b"{}")
            except urllib.error.HTTPError as exc:
                return exc.code, json.loads(exc.read() or b"{}")
            except (ConnectionError, urllib.error.URLError):
                time.sleep(0.05)
        raise AssertionError(f"{method} {path}: no connection")

    def tickets(self, player: str):
        """GET /api/v1/players/{player}/tickets."""
        return self.call("GET", f"/players/{player}/tickets", base=self.root)

    def get(self, slug: str = ""):
        return self.call("GET", f"/{slug}" if slug else "")

    def register(self, slug: str, player: str, **kw):
        return self.call("POST", f"/{slug}/registrations", {"player": player}, **kw)

    def unregister(self, slug: str, player: str, **kw):
        return self.call("DELETE", f"/{slug}/registrations/{player}", **kw)

    def start(self, slug: str, **kw):
        return self.call("POST", f"/{slug}/start", {}, **kw)

    def cancel(self, slug: str, **kw):
        return self.call("POST", f"/{slug}/cancel", {}, **kw)

    def rebuy(self, slug: str, player: str, **kw):
        return self.call("POST", f"/{slug}/rebuys", {"player": player}, **kw)

    def round(self, slug: str, n: int, tables: list, **kw):
        return self.call("POST", f"/{slug}/rounds/{n}", {"tables": tables}, **kw)


def table(name: str, *rows: tuple[str, int, int]) -> dict:
    """A table's standings from (player, position, chips) rows."""
    return {
        "table": name,
        "standings": [{"player": p, "position": pos, "chips": c} for p, pos, c in rows],
    }


def pnl_books(client) -> None:
    """The tournament P&L's books, all of today: `sunday-100` (₹100, 15 % fee, ₹500 guarantee)
    with five entries, one unregistered and one rebuy, finished (fee ₹67.50, overlay ₹117.50,
    prizes ₹500); `chips-free`, a chips freeroll with a 1,000-chip guarantee, finished; and
    `monday-50`, two entries of ₹50, cancelled (refunds ₹100)."""
    from tests.builders import funded_player
    from tournaments.tournaments.services import entries, rounds

    scheduled()
    for p in ("ana", "bo", "cy", "di", "ed"):
        funded_player(p, "500.00")
        entries.registration_create(client=client, slug="sunday-100", player=p)
    entries.registration_withdraw(client=client, slug="sunday-100", player="ed")
    rounds.tournament_start(client=client, slug="sunday-100")
    entries.rebuy_create(client=client, slug="sunday-100", player="ana")
    first = table("A", ("ana", 1, 900), ("bo", 2, 700), ("cy", 3, 300), ("di", 4, 100))
    stored = rounds.round_store(client=client, slug="sunday-100", number=1, tables=[first])
    rounds.round_settle(round_id=stored.pk)
    final = table("F", ("bo", 1, 0), ("ana", 2, 0))
    stored = rounds.round_store(client=client, slug="sunday-100", number=2, tables=[final])
    rounds.round_settle(round_id=stored.pk)

    scheduled(
        slug="chips-free", currency="CHP", entry_fee="0.00", fee_percent="0.00", rebuy=None,
        guarantee="1000.00", min_players=2, max_players=6, rounds=[{"final": True}],
        prizes=[{"ranks": "1", "percent": "100.00"}],
    )  # fmt: skip
    for p in ("ana", "bo"):
        entries.registration_create(client=client, slug="chips-free", player=p)
    rounds.tournament_start(client=client, slug="chips-free")
    final = table("F", ("ana", 1, 0), ("bo", 2, 0))
    stored = rounds.round_store(client=client, slug="chips-free", number=1, tables=[final])
    rounds.round_settle(round_id=stored.pk)

    scheduled(slug="monday-50", entry_fee="50.00", rebuy=None)
    for p in ("cy", "di"):
        entries.registration_create(client=client, slug="monday-50", player=p)
    rounds.tournament_cancel(client=client, slug="monday-50")


def spend_books(client) -> None:
    """The promotions spend report's books, all of today: `pnl_books` (overlay ₹117.50 and
    1,000 chips); two ₹100 tickets finance issued for `main-100`, `fa`'s used to register and
    `fb`'s expired back to promotions by beat's job; a ₹30 leaderboard prize (a transfer posted
    here with the `leaderboard:` reference); a ₹20 bonus granted."""
    from djmoney.money import Money

    from tests.builders import bonus_granted, funded_player, staff
    from tournaments.models import Ticket, TicketIssue
    from tournaments.tournaments.services import entries
    from tournaments.tournaments.services.tickets import ticket_issue_propose, tickets_expire
    from wallets.models import CASH, PlatformAccount, Transfer
    from wallets.services.accounts import platform_accounts
    from wallets.services.proposals import proposal_decide
    from wallets.services.transfers import Leg, transfer_post

    pnl_books(client)
    target = scheduled(
        slug="main-100", rebuy=None, guarantee="0.00", min_players=2, max_players=6,
        rounds=[{"final": True}], prizes=[{"ranks": "1", "percent": "100.00"}],
    )  # fmt: skip
    for p in ("fa", "fb"):
        funded_player(p, "0")
    issue = ticket_issue_propose(
        proposed_by=staff("spend-maker", "finance operator"),
        tournament=target,
        players=["fa", "fb"],
        expires_at=timezone.now() + timedelta(minutes=30),
        reason="Diwali promotion",
    )
    proposal_decide(
        model=TicketIssue,
        proposal_id=issue.pk,
        decided_by=staff("spend-checker", "finance approver"),
        approve=True,
    )
    entries.registration_create(client=client, slug="main-100", player="fa")
    Ticket.objects.filter(player__external_id="fb").update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert tickets_expire() == 1
    winnings = funded_player("fa", "0")["winnings"]
    promotions = platform_accounts()[PlatformAccount.PROMOTIONS]
    transfer_post(
        kind=Transfer.Kind.SETTLEMENT,
        reference="leaderboard:weekly-1",
        idempotency_key="leaderboard:weekly-1:prize:fa",
        legs=[Leg(promotions.pk, -Money("30.00", CASH)), Leg(winnings.pk, Money("30.00", CASH))],
    )
    bonus_granted("fa", "20.00")


__all__ = [
    "Lobby",
    "make_api",
    "pnl_books",
    "scheduled",
    "spend_books",
    "table",
    "tournament_file",
]
