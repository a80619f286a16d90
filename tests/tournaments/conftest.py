"""Builders for game tests: templates, a game server client that always sends an idempotency key,
hands from RULES.md, and eager Celery (settlement runs when the request's transaction commits)."""

from __future__ import annotations

import uuid
from decimal import Decimal

import pytest
from django.db.models import Sum

from rummy_ledger.celery import app as celery_app
from tests.conftest import make_api
from tournaments.models import Game, GameTemplate
from wallets.models import Account, Entry

# RULES.md (S0) worked examples, with wild K.
WILD = "KD"
WINNER = [["AS", "2S", "3S"], ["6C", "8C", "KH"], ["4D", "4S", "4C", "4H"], ["JD", "JH", "PJ"]]
LOSER_22 = [["5H", "6H", "7H"], ["9D", "9S", "9C"], ["2C", "2H", "8C", "QD"], ["10S", "10D", "10C"]]
LOSER_50 = [["7S", "8S", "9S"], ["3D", "3H", "3C"], ["QD", "JC", "10H", "8D", "5S", "4S", "3S"]]
# No pure sequence: everything counts, capped at 80.
LOSER_80 = [["QS", "QH", "QC"], ["JS", "10C", "9H"], ["8H", "7D", "6S", "5D"], ["10D", "JC", "QD"]]


def template(slug: str, fmt: str, **fields) -> GameTemplate:
    defaults = {
        "currency": "INR",
        "seats": 6,
        "fee_percent": Decimal("10.00"),
        "point_value": Decimal("2.00") if fmt == "points" else None,
        "entry_fee": None if fmt == "points" else Decimal("100.00"),
        "deals": 2 if fmt == "deals" else None,
    }
    defaults.update(fields)
    return GameTemplate.objects.create(slug=slug, format=fmt, **defaults)


class Server:
    """A game server over the REST API; every write carries a fresh Idempotency-Key."""

    def __init__(self, name: str = "game-server-1"):
        self.api, self.client = make_api("games", name=name)

    def post(self, path: str, body: dict | None = None, key: str | None = None):
        return self.api.post(
            f"/api/v1/{path}",
            body or {},
            format="json",
            HTTP_IDEMPOTENCY_KEY=key or uuid.uuid4().hex,
        )

    def get(self, path: str):
        return self.api.get(f"/api/v1/{path}")

    def open(self, game_id: str, slug: str, players: list[str], **kw):
        return self.post("games", {"game_id": game_id, "template": slug, "players": players}, **kw)

    def deal(self, game_id: str, deal_no: int, results: list[dict], wild: str = WILD, **kw):
        body = {"deal_no": deal_no, "wild_joker": wild, "results": results}
        return self.post(f"games/{game_id}/deals", body, **kw)


def res(player: str, outcome: str, groups=None, **extra) -> dict:
    out = {"player": player, "outcome": outcome, **extra}
    if groups is not None:
        out["groups"] = groups
    return out


@pytest.fixture
def server(db):
    return Server()


@pytest.fixture
def eager():
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = previous


def escrow_balance(game: Game) -> Decimal:
    return Account.objects.get(pk=game.escrow_id).balance.amount


def books_balance_for(game: Game) -> None:
    """payouts + fee + refunds == collected, and the escrow is empty once the game is over."""
    game.refresh_from_db()
    assert game.paid_out + game.fee + game.refunded + escrow_balance(game) == game.collected
    entries = Entry.objects.filter(account_id=game.escrow_id).aggregate(s=Sum("amount"))["s"]
    assert (entries or 0) == escrow_balance(game)
    if game.status != Game.Status.OPEN:
        assert escrow_balance(game) == 0
