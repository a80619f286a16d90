"""The state machine: the API's operations as hypothesis rules over real HTTP (a live server and
a real Celery worker), faults between the steps, and after each step every balance the API
reports held against the model (tests/simulation/model.py). docs/testing.md, "The state
machine", says how to read and extend it."""

from __future__ import annotations

import random
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from django.conf import settings
from django.db.models import Sum
from hypothesis import note
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from rummy_ledger.celery import app as celery_app
from tests.builders import HttpApi, bonus_granted
from tests.simulation import model, servers
from tests.simulation.model import Books, Game
from tests.simulation.tournament_model import TournamentBooks
from tests.simulation.tournament_rules import TournamentRules
from tests.tournaments.worker import Worker, wait_until
from tests.wallets.invariants import ledger_violations
from tests.wallets.payments import approve
from tournaments.tasks import settle_waiting
from wallets.models import Entry
from wallets.reconciliation.runner import reconcile_run

# The templates the machine plays (made once by the test, tests/simulation/test_api_machine.py):
# slug -> (format, point value or entry fee, fee %, best of N); amounts whose fee is seldom a
# whole paisa, so that the rounding rule shows.
TEMPLATES = {
    "sim-points": ("points", Decimal("1.37"), Decimal("11.11"), 0),
    "sim-pool": ("pool101", Decimal("97.33"), Decimal("13.33"), 0),
    "sim-deals": ("deals", Decimal("33.33"), Decimal("14.29"), 2),
}
TERMS = {"sim-pool": {"rejoin_allowed": True, "split_policy": "drops"}}  # the pool's other terms
WINNER = [["AS", "2S", "3S"], ["6C", "8C", "KH"], ["4D", "4S", "4C", "4H"], ["JD", "JH", "PJ"]]
# The two decks and two printed jokers of S0, less the winner's cards and the card turned up (the
# engine counts it among the deal's copies): what the others are dealt.
LEFT = [r + s for r in model.RANKS for s in model.SUITS] * 2 + ["PJ", "PJ"]
for _card in [*(c for g in WINNER for c in g), model.WILD]:
    LEFT.remove(_card)


class RetryingApi(HttpApi):
    """A client as a game server is one: a 503 (the database restarting) is retried with the same
    Idempotency-Key after its Retry-After; each retry is logged (("retry", path))."""

    def __init__(self, base_url: str, *scopes: str, name: str, log: list):
        super().__init__(base_url, *scopes, name=name)
        self.log = log

    def send(self, method: str, path: str, body: dict | None = None, *, key: str | None = None):
        key = key or uuid.uuid4().hex
        for _ in range(30):
            r = super().send(method, path, body, key=key)
            if r.status_code != 503:
                break
            self.log.append(("retry", path))
            time.sleep(min(float(r.headers.get("Retry-After", 1)), 1.0))
        return r


@dataclass
class World:
    """What outlives one run of the machine: the live server's clients, the worker, and the data
    dir of the machine's own PostgreSQL and Redis (tests/simulation/servers.py)."""

    base_url: str
    queue: str
    data_dir: Path
    games: HttpApi = None
    payments: HttpApi = None
    rival: HttpApi = None
    worker: Worker = None
    real_money: str = "on"  # REAL_MONEY the service was last started with
    log: list = field(default_factory=list)  # (rule, ...) of every step run, for the soak's report

    def __post_init__(self):
        self.games = RetryingApi(self.base_url, "games", name="sim-games", log=self.log)
        self.payments = RetryingApi(self.base_url, "payments", name="sim-gateway", log=self.log)
        self.rival = RetryingApi(self.base_url, "games", name="sim-rival", log=self.log)
        self.worker_start()

    def queue_drop(self) -> None:
        """Every message waiting in the machine's queue is lost (the queue purged)."""
        with celery_app.connection_for_write() as connection:
            connection.default_channel.queue_purge(self.queue)

    def worker_start(self) -> None:
        env = {"REAL_MONEY": self.real_money}
        self.worker = Worker(self.queue, concurrency=1, extra_env=env)

    def worker_restart(self) -> None:
        self.worker.kill()
        self.worker_start()

    def restarted_with_real_money(self, mode: str) -> None:
        """The service restarted with REAL_MONEY=`mode` (the setting is read at start-up:
        docs/money-and-tax.md): the live server runs in this process and reads the setting at
        each request (the runs' fixture restores it), and the worker starts again with it."""
        self.worker.stop()
        self.real_money = settings.REAL_MONEY = mode
        self.worker_start()

    def worker_supervised(self) -> None:
        """A worker that died started again, as `serve` does: on the Redis broker a worker can
        die of a broker outage (a kombu bug, docs/operations.md); logged ("worker-died",)."""
        if self.worker.process.poll() is not None:
            self.log.append(("worker-died",))
            self.worker_restart()

    def settlement_waited(self, done, wake) -> bool:
        """Whether `done()` came true within a minute: every SETTLEMENT_WAKE_SECONDS beat's
        `wake` task is sent, as beat would (a message lost or the broker down costs a wake, never
        a settlement), and a worker that died is started again, as `serve` would."""
        every = settings.SETTLEMENT_WAKE_SECONDS
        for _ in range(int(60 / every)):
            if wait_until(done, timeout=every, every=0.05):
                return True
            self.worker_supervised()
            wake.delay()
        return False


WORLD: list[World] = []  # set by the test that runs the machine


def money(value: str) -> Decimal:
    return Decimal(value)


def platform_receipts() -> dict[str, Decimal]:
    """The platform accounts the model follows, read from the database (read-only)."""
    rows = (
        Entry.objects.filter(account__code__in=[f"platform:{c}" for c in model.PLATFORM])
        .values("account__code")
        .annotate(total=Sum("amount"))
    )
    found = {r["account__code"].split(":", 1)[1]: r["total"] for r in rows}
    return {code: found.get(code, model.ZERO) for code in model.PLATFORM}


# a first drop twice as often as the others but a lost hand: a pool keeps players below 79 (open
# to a rejoin) while others are out
outcomes = st.sampled_from(
    ["lost", "lost", "first_drop", "first_drop", "middle_drop", "wrong_show"]
)
shuffles = st.integers(0, 2**32)  # the order the decks are dealt in
picks = st.lists(st.tuples(outcomes, st.booleans()), min_size=5, max_size=5)  # (outcome, sorted)
valid = st.sampled_from([True, False])  # a valid deal is the simplest example, an invalid one next
# between two deals (`fault`); the last two take the next deal's post (`deal_posted`)
FAULTS = ["kill-worker", "deliver-twice", "restart-postgres", "drop-message", "stop-broker"]


class ApiMachine(TournamentRules, RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.world = WORLD[0]
        self.books = Books()
        self.lobby = TournamentBooks(self.books)  # the run's tournaments
        self.run = uuid.uuid4().hex[:6]
        self.start = platform_receipts()
        self.last_write = None  # (api, path, body, key, status, body) of the last game write
        self.next_deal_fault = None  # a fault the next deal is posted in: see `deal_posted`
        self.calm = False  # a deal was posted since the last fault: the next may come
        self.keys_reused = False
        self.bonus_lots = 0  # credited in this run
        self.limits_set = False
        self.probed: set[str] = set()  # the games another client has tried
        self.seq = 0

    def step(self, *what) -> None:
        self.world.log.append(what)
        if currently_in_test_context():  # a saved sequence replays as plain calls
            note(" ".join(map(str, what)))

    def next_id(self, kind: str) -> str:
        self.seq += 1
        return f"{self.run}-{kind}{self.seq}"

    # --- players and money ----------------------------------------------------------------------

    @initialize()
    def players_arrive(self):
        """Four players deposit; three complete KYC (p3 never does: its withdrawals are
        refused). 200.00 credited is two pool entries and a little: a winner's next entries take
        from deposit and winnings both."""
        for n in range(4):
            self.deposit_as(f"{self.run}-p{n}", Decimal("280.00"))  # 200.00 credited
            if n < 3:
                self.kyc(f"{self.run}-p{n}")

    def deposit_as(self, player: str, amount: Decimal, key: str | None = None):
        body = {"amount": str(amount), "reference": self.next_id("dep")}
        r = self.world.payments.post(f"players/{player}/deposits", body, key=key)
        expected = self.books.deposit(player, amount)
        if isinstance(expected, str):
            assert (r.status_code, r.json()["error"]["code"]) == (409, expected), r.text
            return body
        assert r.status_code == 201, r.text
        assert (money(r.json()["gst"]), money(r.json()["credited"])) == expected
        return body

    @precondition(
        lambda self: any(p.deposit + p.winnings < 120 for p in self.books.players.values())
    )
    @rule(n=st.integers(0, 3), amount=st.decimals("1.00", "900.00", places=2))
    def deposit(self, n, amount):
        """A player tops up (once one cannot pay a points stake: the machine's time goes to
        games, and entries come from deposit and winnings both)."""
        self.step("deposit", n, amount)
        self.deposit_as(f"{self.run}-p{n}", amount)

    def kyc(self, player: str) -> None:
        pan = f"{uuid.uuid4().hex[:5].upper().translate(str.maketrans('0123456789', 'ABCDEFGHIJ'))}"
        pan += f"{uuid.uuid4().int % 10000:04d}Z"
        body = {"pan": pan, "status": "verified", "reference": self.next_id("kyc")}
        r = self.world.payments.post(f"players/{player}/kyc", body)
        assert r.status_code == 201, r.text
        self.books.players[player].pan = pan

    @precondition(lambda self: any(p.winnings for p in self.books.players.values()))
    @rule(data=st.data(), share=st.integers(1, 120))
    def withdraw(self, data, share):
        """`share` % of a player's winnings (more than 100: refused)."""
        winners = [n for n, p in self.books.players.items() if p.winnings]
        self.withdraw_one(data.draw(st.sampled_from(winners)), share)

    def withdraw_one(self, player: str, share: int) -> None:
        amount = max(
            (self.books.players[player].winnings * share / 100).quantize(model.PAISA), model.PAISA
        )
        self.withdraw_amount(player, amount)

    def withdraw_amount(self, player: str, amount: Decimal) -> None:
        self.step("withdraw", player, amount)
        body = {"amount": str(amount), "reference": self.next_id("wd")}
        r = self.world.payments.post(f"players/{player}/withdrawals", body)
        expected = self.books.withdraw(player, amount)
        if isinstance(expected, str):
            assert (r.status_code, r.json()["error"]["code"]) == (409, expected), r.text
            return
        assert r.status_code == 201, r.text
        got = r.json()
        want = (expected.tds, expected.status, expected.from_deposit)
        assert (money(got["tds"]), got["status"], money(got["from_deposit"])) == want, got
        self.books.withdrawals[got["withdrawal_id"]] = expected

    @precondition(
        lambda self: any(w.status == "requested" for w in self.books.withdrawals.values())
    )
    @rule(data=st.data())
    def finance_approves(self, data):
        waiting = [i for i, w in self.books.withdrawals.items() if w.status == "requested"]
        wid = data.draw(st.sampled_from(waiting))
        self.step("approve", wid)
        assert approve(wid).status == "approved"
        self.books.approve(self.books.withdrawals[wid])

    @precondition(lambda self: any(w.status == "approved" for w in self.books.withdrawals.values()))
    @rule(data=st.data(), paid=st.booleans())
    def gateway_answers(self, data, paid):
        approved = [i for i, w in self.books.withdrawals.items() if w.status == "approved"]
        wid = data.draw(st.sampled_from(approved))
        self.step("paid" if paid else "failed", wid)
        if paid:
            body = {"gateway_reference": self.next_id("gw")}
            r = self.world.payments.post(f"withdrawals/{wid}/paid", body)
            self.books.withdrawals[wid].status = "paid"
        else:
            r = self.world.payments.post(f"withdrawals/{wid}/failed", {"reason": "closed"})
            self.books.failed(self.books.withdrawals[wid])
        assert r.status_code in (200, 201), r.text
        assert r.json()["status"] == self.books.withdrawals[wid].status

    @precondition(lambda self: self.bonus_lots < 2)
    @rule(n=st.integers(0, 3), amount=st.decimals("0.01", "40.00", places=2))
    def bonus_credited(self, n, amount):
        """A bonus lot from promotions, credited as tests credit one (a finance grant through
        the service), then spent: a points game of the player and the next one opens (its
        entry takes bonus first, at most the cap: docs/rules.md), for the deals to settle."""
        self.bonus_lots += 1
        self.bonus_credit(f"{self.run}-p{n}", amount)
        if len(self.open_games()) < 3:
            self.open_game("sim-points", {n, (n + 1) % 4})

    def bonus_credit(self, player: str, amount: Decimal) -> None:
        self.step("bonus", player, amount)
        bonus_granted(player, str(amount))
        self.books.bonus_grant(player, amount)

    @precondition(lambda self: not self.limits_set)
    @rule(
        n=st.integers(0, 3),
        limits=st.tuples(*[st.none() | st.decimals("280.00", "1200.00", places=2)] * 2),
        amount=st.decimals("1.00", "900.00", places=2),
    )
    def deposit_limits(self, n, limits, amount):
        """The gateway sets a player's daily and monthly deposit limits (a lower one counts at
        once, a raise waits), then the player deposits `amount`: credited, or 409
        `deposit_limit` and nothing moves. Once a run: the games keep their share of the steps."""
        self.limits_set = True
        player = f"{self.run}-p{n}"
        body = {k: None if v is None else str(v) for k, v in zip(model.LIMITS, limits, strict=True)}
        self.step("limits", player, body)
        r = self.world.payments.send("PUT", f"players/{player}/limits", body)
        p = self.books.players[player]
        for kind, limit in zip(model.LIMITS, limits, strict=True):
            p.limit_set(kind, limit)
        got = r.json()
        assert r.status_code == 200, r.text
        want = {k: None if v is None else str(v) for k, v in p.limits.items()}
        assert {k: got[f"{k}_limit"] for k in model.LIMITS} == want, (got, want)
        self.step("deposit", n, amount)
        self.deposit_as(player, amount)

    @precondition(lambda self: not any(p.excluded for p in self.books.players.values()))
    @rule(n=st.integers(0, 3), days=st.integers(1, 365))
    def self_exclusion(self, n, days):
        """A player excludes themselves (once a run): then a deposit, a points game with the
        next player and, while a tournament registers, a registration are 409 `self_excluded`
        and nothing moves."""
        player = f"{self.run}-p{n}"
        self.step("self-exclusion", player, days)
        r = self.world.payments.post(f"players/{player}/self-exclusion", {"days": days})
        assert (r.status_code, r.json()["self_excluded"]) == (201, True), r.text
        self.books.players[player].excluded = True
        self.deposit_as(player, Decimal("100.00"))
        self.open_game("sim-points", {n, (n + 1) % 4})
        slug = self.tournament_now()
        if slug and self.lobby.tournaments[slug].status == "registering":
            self.register_one(slug, player, pay_with_money=False)

    @precondition(lambda self: not self.keys_reused)
    @rule(n=st.integers(0, 3), amount=st.decimals("1.00", "50.00", places=2))
    def one_key_two_operations(self, n, amount):
        """The same Idempotency-Key and body to /deposits and then /withdrawals: a key names one
        request (its path too), so the withdrawal is 409 `idempotency_conflict`, never the
        deposit's stored answer, and nothing moves."""
        player = f"{self.run}-p{n}"
        key = uuid.uuid4().hex
        self.keys_reused = True
        self.step("key-reuse", n, amount)
        body = self.deposit_as(player, amount, key=key)
        r = self.world.payments.post(f"players/{player}/withdrawals", body, key=key)
        assert "Idempotent-Replayed" not in r.headers, r.text
        assert (r.status_code, r.json()["error"]["code"]) == (409, "idempotency_conflict"), r.text

    # --- games ----------------------------------------------------------------------------------

    @precondition(lambda self: len(self.open_games()) < 3)
    @rule(slug=st.sampled_from(sorted(TEMPLATES)), seats=st.sets(st.integers(0, 3), min_size=2))
    def open_game(self, slug, seats):
        fmt, value, fee, deals_n = TEMPLATES[slug]
        game_id = self.next_id("g")
        players = [f"{self.run}-p{n}" for n in sorted(seats)]
        self.step("open", slug, game_id, sorted(seats))
        body = {"game_id": game_id, "template": slug, "players": players}
        r = self.write(self.world.games, "games", body)
        game = Game(fmt, players, {}, fee, point_value=value, deals_n=deals_n)
        refused = self.books.open(game_id, game)
        if refused:
            assert (r.status_code, r.json()["error"]["code"]) == (409, refused[0]), r.text
        else:
            assert r.status_code == 201, r.text

    def open_games(self) -> list[str]:
        return [g for g, game in self.books.games.items() if game.status == "open"]

    def results(self, game: Game, shuffle: int, picks) -> list[dict]:
        """The winner shows WINNER; each other player an outcome and 13 cards dealt from what
        is left of the decks, grouped 3-3-3-4 (sorted by suit and rank, or as dealt)."""
        left = random.Random(shuffle).sample(LEFT, len(LEFT))
        playing = game.in_play()
        winner, rest = playing[0], playing[1:]
        out = [{"player": winner, "outcome": "declared", "groups": WINNER}]
        for i, (player, (outcome, tidy)) in enumerate(zip(rest, picks, strict=False)):
            cards = left[13 * i : 13 * i + 13]
            if tidy:
                cards.sort(key=lambda c: (c[-1], model.RANKS.index(c[:-1]) if c != "PJ" else 0))
            if game.fmt == "deals" and outcome.endswith("drop"):
                outcome = "lost"  # best of 2 allows no drop (docs/rules.md)
            groups = [cards[0:3], cards[3:6], cards[6:9], cards[9:13]]
            out.append({"player": player, "outcome": outcome, "groups": groups})
        return out

    def deal_body(self, game_id: str, shuffle: int, picks, valid: bool, ahead: int = 0) -> dict:
        """The game's next deal (`ahead` numbers past it: out of order)."""
        game = self.books.games[game_id]
        results = self.results(game, shuffle, picks)
        if not valid:  # a loser's dealt hand posted as the declaration, the winner out
            shown, winner = results[-1], results[0]
            results[0] = {**shown, "outcome": "declared"}
            results[-1] = {"player": winner["player"], "outcome": "wrong_show"}
        return {"deal_no": game.deals + 1 + ahead, "wild_joker": model.WILD, "results": results}

    def deal_taken(self, game_id: str, body: dict, status: int, answer: dict) -> None:
        """The answer the model expects for the deal, and the deal settled in both."""
        refusal = model.deal_refusal(body["results"])
        self.calm = True
        if refusal is None:
            assert status == 202, answer
            self.settled(game_id)
            self.books.deal(game_id, body["results"])
        else:
            assert (status, answer["error"]["code"]) == (422, refusal), answer

    @precondition(lambda self: bool(self.open_games()))
    @rule(
        data=st.data(),
        shuffle=shuffles,
        picks=picks,
        valid=valid,
        more=st.sampled_from([2, 1, 0]),
        then=st.sampled_from(["", "rejoin", "split"]),
        ahead=st.integers(0, 3),
    )
    def deal(self, data, shuffle, picks, valid, more, then, ahead):
        """A deal of an open game, and `more` valid ones after it while the game is open: in a
        pool, before each of them every eliminated player's rejoin, or after them a split (a pool
        loses a player in two deals at the soonest: the CI budget reaches its rejoins this way).
        First, unless `ahead` is 0, the deal numbered `ahead` past the next and an old one with
        other content, both refused (`deals_refused`; a rule of their own would take the deals'
        share of the budget's steps)."""
        game_id = data.draw(st.sampled_from(self.open_games()))
        if ahead:
            self.deals_refused(game_id, shuffle, picks, ahead)
        self.deal_one(game_id, shuffle, picks, valid)
        for n in range(more):
            if then == "rejoin" and game_id in self.pools_with_eliminated():
                for player in sorted(self.books.games[game_id].out):
                    self.rejoin_one(game_id, player)
            if self.books.games[game_id].status == "open":
                self.deal_one(game_id, shuffle + n + 1, picks, True)
        if then == "split" and game_id in self.open_pools():
            self.split_one(game_id)

    def deal_one(self, game_id: str, shuffle: int, picks, valid: bool) -> None:
        body = self.deal_body(game_id, shuffle, picks, valid)
        self.step("deal", game_id, body["deal_no"], "valid" if valid else "invalid")
        with self.deal_posted():
            r = self.write(self.world.games, f"games/{game_id}/deals", body)
        self.deal_taken(game_id, body, r.status_code, r.json())

    def deals_refused(self, game_id: str, shuffle: int, picks, ahead: int) -> None:
        """A deal numbered past the next is 409 `deal_out_of_order`; an old number with other
        content (another wild joker) is 409 `deal_exists`, not a replay (docs/api.md); the
        game's deals stay as they were."""
        game = self.books.games[game_id]
        posts = [(self.deal_body(game_id, shuffle, picks, True, ahead), "deal_out_of_order")]
        if game.deals:  # an old number: the last deal's
            old = self.deal_body(game_id, shuffle, picks, True, ahead=-1)
            posts.append(({**old, "wild_joker": model.OTHER_WILD}, "deal_exists"))
        self.step("deal-refused", game_id, [(b["deal_no"], code) for b, code in posts])
        for body, code in posts:
            r = self.world.games.post(f"games/{game_id}/deals", body)
            assert (r.status_code, r.json()["error"]["code"]) == (409, code), r.text
        deals = self.world.games.send("GET", f"games/{game_id}").json()["deals"]
        assert len(deals) == game.deals, deals

    @contextmanager
    def deal_posted(self):
        """The fault the next deal waits for, around its post: its settlement message lost (sent
        while no worker listens, then purged), or the broker down (the deal still acknowledged:
        the service stores it and beat's wake settles it once the broker is back)."""
        fault, self.next_deal_fault = self.next_deal_fault, None
        if fault == "drop-message":
            self.world.worker.kill()
            yield
            self.world.queue_drop()
            self.world.worker_restart()
        elif fault == "stop-broker":
            with servers.broker_stopped(self.world.data_dir, seconds=3):
                yield
        else:
            yield

    @precondition(lambda self: bool(self.open_games()))
    @rule(shuffle=shuffles, picks=picks, valid=st.lists(valid, min_size=1))
    def deals_batch(self, shuffle, picks, valid):
        """One deal of every open game in one `POST /deals`, each valid or not."""
        games = self.open_games()
        bodies = [
            {"game_id": g, **self.deal_body(g, shuffle + i, picks, valid[i % len(valid)])}
            for i, g in enumerate(games)
        ]
        self.step("batch", [(b["game_id"], b["deal_no"]) for b in bodies])
        r = self.write(self.world.games, "deals", {"deals": bodies})
        assert r.status_code == 200, r.text
        for body, result in zip(bodies, r.json()["results"], strict=True):
            self.deal_taken(body["game_id"], body, result["status"], result)

    @precondition(lambda self: self.last_write is not None)
    @rule()
    def repeat_last_write(self):
        """The same key and body again: the first answer, byte for byte, and nothing moves."""
        api, path, body, key, status, text = self.last_write
        self.step("repeat", path)
        r = api.post(path, body, key=key)
        self.last_write = None  # once is enough
        assert (r.status_code, r.text) == (status, text)
        assert r.headers.get("Idempotent-Replayed") == "true"

    def open_pools(self) -> list[str]:
        return [g for g in self.open_games() if self.books.games[g].fmt == "pool101"]

    def pools_with_eliminated(self) -> list[str]:
        return [g for g in self.open_pools() if self.books.games[g].out]

    @precondition(lambda self: bool(self.pools_with_eliminated()))
    @rule(data=st.data())
    def rejoin(self, data):
        """A pool player buys back in: an eliminated one (200, or 409 `rejoin_closed` or
        `insufficient_funds`) or one still playing (409 `not_eliminated`)."""
        game_id = data.draw(st.sampled_from(self.pools_with_eliminated()))
        game = self.books.games[game_id]
        self.rejoin_one(game_id, data.draw(st.sampled_from(sorted(game.out) + game.players)))

    def rejoin_one(self, game_id: str, player: str) -> None:
        game = self.books.games[game_id]
        refusal = self.books.rejoin(game_id, player)
        self.step("rejoin", game_id, player, refusal or "taken")
        r = self.write(self.world.games, f"games/{game_id}/rejoin", {"player": player})
        if refusal is None:
            assert r.status_code == 200, r.text
            assert money(r.json()["collected"]) == game.collected(), r.text
        else:
            assert (r.status_code, r.json()["error"]["code"]) == (409, refusal), r.text

    @precondition(lambda self: bool(self.open_pools()))
    @rule(data=st.data())
    def split(self, data):
        """The remaining players of a pool share it by drops left (the template's `drops`)."""
        self.split_one(data.draw(st.sampled_from(self.open_pools())))

    def split_one(self, game_id: str) -> None:
        self.step("split", game_id)
        r = self.write(self.world.games, f"games/{game_id}/split", {})
        shares = self.books.split(game_id)
        assert r.status_code == 200, r.text
        got = {
            p["player"]: money(p["payout"]) for p in r.json()["players"] if p["player"] in shares
        }
        assert (r.json()["outcome"], got) == ("split", shares), r.text

    @precondition(lambda self: set(self.books.games) - self.probed)
    @rule(data=st.data())
    def another_clients_game(self, data):
        """Each game once: another client's reads and writes of it are 404."""
        game_id = data.draw(st.sampled_from(sorted(set(self.books.games) - self.probed)))
        self.probed.add(game_id)
        self.step("rival", game_id)
        assert self.world.rival.send("GET", f"games/{game_id}").status_code == 404
        body = {"deal_no": 1, "wild_joker": model.WILD, "results": []}
        r = self.world.rival.post(f"games/{game_id}/deals", body)
        assert r.status_code in (400, 404), r.text  # a malformed body may be refused first
        r = self.world.rival.post(f"games/{game_id}/cancel", {})
        assert (r.status_code, r.json()["error"]["code"]) == (404, "game_not_found"), r.text

    @precondition(lambda self: bool(self.open_games()))
    @rule(data=st.data())
    def cancel(self, data):
        self.cancel_one(data.draw(st.sampled_from(self.open_games())))

    def cancel_one(self, game_id: str) -> None:
        self.step("cancel", game_id)
        r = self.write(self.world.games, f"games/{game_id}/cancel", {})
        assert r.status_code == 200, r.text
        self.books.cancel(game_id)

    def write(self, api: HttpApi, path: str, body: dict):
        key = uuid.uuid4().hex
        r = api.post(path, body, key=key)
        self.last_write = (api, path, body, key, r.status_code, r.text)
        return r

    def settled(self, game_id: str) -> None:
        """Wait until every deal of the game is settled (`World.settlement_waited`)."""

        def done():
            deals = self.world.games.send("GET", f"games/{game_id}").json()["deals"]
            return all(d["status"] == "settled" for d in deals)

        assert self.world.settlement_waited(done, settle_waiting), f"{game_id} not settled"

    # --- faults ---------------------------------------------------------------------------------

    @precondition(lambda self: self.calm)
    @rule(fault=st.sampled_from(FAULTS))
    def fault(self, fault):
        """A worker SIGKILLed (perhaps mid-settlement) and another started; the settlement
        message delivered twice (and once more by beat's wake); PostgreSQL restarted (the live
        server, the worker and this process reconnect; a request answered 503 meanwhile is
        retried with its key); the next deal's message lost, or the broker stopped for a few
        seconds around the next deal (`deal_posted`)."""
        self.step("fault", fault)
        self.calm = False
        if fault == "kill-worker":
            self.world.worker_restart()
        elif fault == "deliver-twice":
            settle_waiting.delay()
            settle_waiting.delay()
        elif fault == "restart-postgres":
            servers.postgres_restart(self.world.data_dir)
        else:
            self.next_deal_fault = fault

    # --- the invariants -------------------------------------------------------------------------

    @invariant()
    def balances_agree(self):
        for player, p in self.books.players.items():
            r = self.world.payments.send("GET", f"players/{player}/wallet")
            got = {b: money(v["amount"]) for b, v in r.json()["balances"].items()}
            want = p.balances()
            assert {b: got[b] for b in want} == want, (player, got, want)
        now = platform_receipts()
        moved = {code: now[code] - self.start[code] for code in now}
        assert moved == self.books.platform, (moved, self.books.platform)

    @invariant()
    def ledger_sound(self):
        assert ledger_violations() == []

    def teardown(self):
        for game_id in self.books.games:
            self.settled(game_id)
        self.balances_agree()
        report = reconcile_run(trigger="command")
        assert report.status == "clean", list(report.discrepancies.values("kind", "details"))
