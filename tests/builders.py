"""Builders for the tests: API clients, funded players, transfers, templates, a game server
over the REST API, hands from docs/rules.md, games, finance staff. Plain functions (STYLE.md: no
fixtures that rot); the conftests turn a few of them into fixtures."""

from __future__ import annotations

import time
import uuid
from decimal import Decimal

import requests
from django.contrib.auth.models import Group, User
from django.db import connection
from django.db.models import Sum
from django.test import Client
from django.utils import timezone
from django_otp import DEVICE_ID_SESSION_KEY
from django_otp.oath import TOTP
from django_otp.plugins.otp_totp.models import TOTPDevice
from djmoney.money import Money
from rest_framework.test import APIClient

from rummy_ledger.api.keys import api_client_create
from tournaments.games.services.intake import deal_store
from tournaments.games.services.opening import game_open
from tournaments.games.services.settlement import waiting_settle
from tournaments.models import Game, GameTemplate
from wallets.chain.links import chain_extend
from wallets.models import (
    CASH,
    Account,
    BonusLot,
    ChainLink,
    Entry,
    FlaggedPair,
    FlowReport,
    Player,
    Transfer,
)
from wallets.roles import roles_ensure
from wallets.services.accounts import player_accounts
from wallets.services.bonuses import bonus_grant
from wallets.services.deposits import deposit_register
from wallets.services.players import player_get_or_create
from wallets.services.transfers import Leg, Posted, transfer_post
from wallets.tax import formulas
from wallets.tax.gst_rates import gst_rate_now

# --- wallets ------------------------------------------------------------------------------------


def make_api(*scopes: str, name: str = "server") -> tuple[APIClient, object]:
    client, key = api_client_create(name=name, scopes=list(scopes))
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Api-Key {key}")
    return api, client


class HttpApi:
    """A client of the API over real HTTP (a live server): `Api-Key` auth, JSON bodies, and a
    fresh Idempotency-Key on every write unless one is given."""

    def __init__(self, base_url: str, *scopes: str, name: str):
        self.client, key = api_client_create(name=name, scopes=list(scopes))
        self.base_url = base_url
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Api-Key {key}"

    def send(
        self, method: str, path: str, body: dict | None = None, *, key: str | None = None
    ) -> requests.Response:
        headers = {"Idempotency-Key": key or uuid.uuid4().hex}
        url = f"{self.base_url}/api/v1/{path}"
        return self.session.request(method, url, json=body, headers=headers)

    def post(self, path: str, body: dict | None = None, *, key: str | None = None):
        return self.send("POST", path, body, key=key)


def deposit_for_credit(credited: Decimal, *, rate_percent: Decimal) -> Decimal:
    """The smallest deposit that credits exactly `credited` at this rate (every amount in paise
    is reached: one paisa more deposited adds at most one paisa of GST): how the tests and the
    benchmarks fund a player with a round amount through the real deposit path."""
    if credited <= 0 or credited != credited.quantize(formulas.PAISA):
        raise formulas.TaxError(f"a credit is a positive amount in paise, not {credited}")
    share = formulas.gst_rate_checked(rate_percent) / (formulas.HUNDRED + rate_percent)
    amount = max((credited / (1 - share)).quantize(formulas.PAISA) - 2 * formulas.PAISA, credited)
    while formulas.gst_split(amount, rate_percent=rate_percent).credited < credited:
        amount += formulas.PAISA
    return amount


def funded_player(external_id: str, amount: str = "1000.00"):
    """A registered player with `amount` INR in the deposit bucket (a deposit of a little more:
    GST is taken from it); returns its accounts."""
    if amount != "0":
        deposit_register(
            player_external_id=external_id,
            amount=Money(deposit_for_credit(Decimal(amount), rate_percent=gst_rate_now()), CASH),
            reference=f"fund-{external_id}-{amount}",
        )
    return player_accounts(player=player_get_or_create(external_id=external_id))


def flagged_pair(
    loser: str, winner: str, review: str = FlaggedPair.Review.UNDER_REVIEW
) -> FlaggedPair:
    """A one-way-flow report of its own (the latest now) flagging this pair of players."""
    now = timezone.now()
    report = FlowReport.objects.create(trigger="command", since=now, thresholds={})
    return FlaggedPair.objects.create(
        report=report,
        loser=Player.objects.get(external_id=loser),
        winner=Player.objects.get(external_id=winner),
        games=5,
        amount=Decimal("500.00"),
        returned=Decimal("0.00"),
        first_game_at=now,
        last_game_at=now,
        review=review,
    )


def bonus_granted(external_id: str, amount: str, key: str | None = None) -> Posted:
    """Grant `amount` INR of bonus (a lot expiring after BONUS_EXPIRY_DAYS) to the player."""
    key = key or f"bonus-{external_id}-{uuid.uuid4().hex[:8]}"
    return bonus_grant(
        player=player_get_or_create(external_id=external_id),
        amount=Money(amount, CASH),
        source=BonusLot.Source.GRANT,
        reference=key,
        idempotency_key=key,
    )


def move(source: Account, target: Account, amount, key: str, kind: str = "transfer") -> Posted:
    """Post `amount` INR (a decimal string or Decimal) from one account to another."""
    return transfer_post(
        kind=kind,
        reference=key,
        idempotency_key=key,
        legs=[Leg(source.pk, -Money(amount, CASH)), Leg(target.pk, Money(amount, CASH))],
    )


def chain_caught_up(timeout: float = 30) -> None:
    """Run the chain's job until every transfer is chained (a transaction another test process
    holds open keeps the commit-order reader back until it ends)."""
    deadline = time.monotonic() + timeout
    while True:
        chain_extend(wait=True)
        if ChainLink.objects.count() == Transfer.objects.count():
            return
        assert time.monotonic() < deadline, "the chain did not catch up"
        time.sleep(0.1)


# --- games --------------------------------------------------------------------------------------

# docs/rules.md's worked examples (S0), with wild K.
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
        out["groups"] = [list(group) for group in groups]  # a copy: WINNER & co. stay as they are
    return out


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


def points_game(client, game_id: str, players=("a", "b", "c", "d"), settle: bool = True) -> Game:
    """A points game of four funded players, its deal stored through the intake service (the
    settle task it queues is never sent: the test's transaction never commits) and settled
    here unless `settle` is False."""
    if not GameTemplate.objects.filter(slug="points-2").exists():
        template("points-2", "points")
    for p in players:
        funded_player(p, "500.00")
    game_open(client=client, game_id=game_id, template_slug="points-2", players=list(players))
    a, b, c, d = players
    payload = {
        "deal_no": 1,
        "wild_joker": "KD",
        "results": [
            res(a, "declared", WINNER),
            res(b, "first_drop"),
            res(c, "middle_drop"),
            res(d, "lost", LOSER_50, claimed_points=45),
        ],
    }
    deal_store(client=client, game_id=game_id, payload=payload)
    if settle:
        waiting_settle()
    return Game.objects.get(client=client, game_id=game_id)


# --- finance staff ------------------------------------------------------------------------------


def staff_client(user: User, **client_options) -> Client:
    """A test client signed in as `user` past the second factor: the one way tests sign in to
    the admin. The user gets a confirmed authenticator (kept if it has one) and the session is
    marked verified by it, as `django_otp.login` marks it after a code."""
    client = Client(**client_options)
    client.force_login(user)
    session = client.session
    session[DEVICE_ID_SESSION_KEY] = authenticator(user).persistent_id
    session.save()
    return client


def authenticator(user: User) -> TOTPDevice:
    """The user's confirmed authenticator (made if it has none): the phone app of a test."""
    device = TOTPDevice.objects.filter(user=user, confirmed=True).first()
    return device or TOTPDevice.objects.create(user=user, name="authenticator", confirmed=True)


def totp_code(device: TOTPDevice, steps_ahead: int = 0) -> str:
    """The code the device's app shows now (or `steps_ahead` 30 s steps later)."""
    totp = TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift)
    totp.time = time.time() + steps_ahead * device.step
    return f"{totp.token():0{device.digits}d}"


def staff(username: str, *groups: str, superuser: bool = False) -> User:
    roles_ensure()
    user = User.objects.create_user(
        username=username, password=None, is_staff=True, is_superuser=superuser
    )
    user.groups.add(*Group.objects.filter(name__in=groups))
    return User.objects.get(pk=user.pk)  # fresh permission cache


def tamper(statement: str, params=None) -> None:
    """Change ledger rows behind the app's back: the append-only triggers are off for this one
    statement, inside the test's transaction. Pending deferred checks run first, while the
    ledger is still right (the test's transaction never commits, so they would fire at teardown).
    """
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute(statement, params)
        cursor.execute("SET LOCAL session_replication_role = origin")
