"""A game-server simulator: plays real games over HTTP against a running service.

Random legal hands from a shuffled shoe of as many decks as the table's rules deal to that many
players (S1: 3 decks from 4; Rummy 500: 2 decks from 5); the winner's hand is built valid, losers
show the engine's best grouping of 13 random cards. Drops, wrong shows, and deals won without a
show: when every other player is out of the deal (at a 2-player table one wrong show ends it) the
winner is posted `declared` with no groups. Pool rejoins and splits, Rummy 500 hands. It only
talks to the REST API, like a real game server would; the engine is used to make plausible
hands, never to decide anything the service decides.
"""

from __future__ import annotations

import json
import random
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

from rummy_ledger.instance import HEADER as INSTANCE_HEADER
from tournaments import rummy
from tournaments.rummy import rummy500
from tournaments.rummy.cards import PJ

GONE_OUT = {"first_drop", "middle_drop", "wrong_show"}  # what it posts for a player out of a deal


class ApiError(Exception):
    def __init__(self, status: int, body: dict):
        super().__init__(f"{status}: {body}")
        self.status = status
        self.body = body


class WrongServer(Exception):
    """The server answering is not the one the simulator was told to play against."""


class Http:
    def __init__(self, base_url: str, key: str, *, instance: str | None = None):
        self.base = base_url.rstrip("/") + "/api/v1/"
        self.key = key
        self.instance = instance

    def check_instance(self, headers, url: str) -> None:
        """Refuse any answer that does not carry the expected instance token (when one is set):
        on a busy port, another server may be the one answering."""
        if self.instance is not None and headers.get(INSTANCE_HEADER) != self.instance:
            raise WrongServer(
                f"{url} is answered by another server (its {INSTANCE_HEADER} header is "
                f"{headers.get(INSTANCE_HEADER)!r}), not by the one this simulator was started for"
            )

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Api-Key {self.key}", "Content-Type": "application/json"}
        if method != "GET":
            headers["Idempotency-Key"] = uuid.uuid4().hex
        request = urllib.request.Request(self.base + path, data, headers, method=method)
        for attempt in range(20):
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    self.check_instance(response.headers, request.full_url)
                    return json.loads(response.read() or b"{}")
            except urllib.error.HTTPError as exc:
                self.check_instance(exc.headers, request.full_url)
                payload = json.loads(exc.read() or b"{}")
                if exc.code == 409 and exc.headers.get("Retry-After") and attempt < 19:
                    time.sleep(float(exc.headers["Retry-After"]) / 4)
                    continue
                raise ApiError(exc.code, payload) from None
        raise AssertionError("unreachable")

    def get(self, path: str) -> dict:
        return self.call("GET", path)

    def post(self, path: str, body: dict | None = None) -> dict:
        return self.call("POST", path, body or {})

    def delete(self, path: str) -> dict:
        return self.call("DELETE", path)


@dataclass
class Tally:
    games: int = 0
    deals: int = 0
    rejoins: int = 0
    # rejoins asked at random and refused (409), by error code: expected, not a fault
    rejoins_refused: Counter[str] = field(default_factory=Counter)
    splits: int = 0
    collected: Decimal = Decimal(0)
    paid_out: Decimal = Decimal(0)
    refunded: Decimal = Decimal(0)
    fee: Decimal = Decimal(0)
    unbalanced: list[str] = field(default_factory=list)


class Lobby:
    """What plays over HTTP: the service, the players it seats, its dice and where it reports."""

    def __init__(
        self,
        http: Http,
        players: list[str],
        *,
        seed: int | None = None,
        say: Callable[[str], None] = print,
    ):
        self.http = http
        self.players = players
        self.rng = random.Random(seed)
        self.say = say


class Simulator(Lobby):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.tallies: dict[str, Tally] = defaultdict(Tally)
        self.run = uuid.uuid4().hex[:6]
        self.count = 0

    # --- hands ------------------------------------------------------------------------------

    def _shoe(self, decks: int, jokers_per_deck: int) -> list[int]:
        shoe = list(range(52)) * decks + [PJ] * (decks * jokers_per_deck)
        self.rng.shuffle(shoe)
        return shoe

    def _winner_hand(self, shoe: list[int]) -> list[list[int]]:
        """A valid show: a pure 4-sequence, a pure 3-sequence and two sets of three."""
        while True:
            a, b = self.rng.sample(range(4), 2)
            r, s = self.rng.randrange(0, 10), self.rng.randrange(0, 11)
            x, y = self.rng.sample(range(13), 2)
            groups = [
                [a * 13 + r + i for i in range(4)],
                [b * 13 + s + i for i in range(3)],
                [suit * 13 + x for suit in self.rng.sample(range(4), 3)],
                [suit * 13 + y for suit in self.rng.sample(range(4), 3)],
            ]
            cards = [c for g in groups for c in g]
            if len(set(cards)) == 13 and all(c in shoe for c in cards):
                for c in cards:
                    shoe.remove(c)
                return groups

    def _deal13(self, template: dict, seated: list[str], deal_no: int) -> dict:
        rules = rummy.RuleSet(**template["rules"])
        shoe = self._shoe(rules.decks_for(len(seated)), rules.printed_jokers_per_deck)
        winner = self.rng.choice(seated)
        winner_groups = self._winner_hand(shoe)
        wild = shoe.pop()
        # At a 2-player table one wrong show ends the deal, so they are made more likely there.
        wrong_show = 0.15 if len(seated) == 2 else 0.05
        results = []
        for p in seated:
            if p == winner:
                results.append(
                    {"player": p, "outcome": "declared", "groups": _names(winner_groups)}
                )
                continue
            hand = [shoe.pop() for _ in range(13)]
            roll = self.rng.random()
            best = rummy.best_arrangement(hand, wild, rules)
            groups = [rummy.card_names(g.cards) for g in best.groups]
            drops = rules.allows_drops(template["deals"])
            if drops and roll < 0.12:
                results.append({"player": p, "outcome": "first_drop"})
            elif drops and roll < 0.22:
                results.append({"player": p, "outcome": "middle_drop"})
            elif roll < 0.22 + wrong_show:
                shown = {} if best.valid else {"groups": groups}  # the invalid hand it showed
                results.append({"player": p, "outcome": "wrong_show", **shown})
            else:
                outcome = "valid_second" if best.valid else "lost"
                claimed = best.points + (1 if self.rng.random() < 0.03 else 0)
                results.append(
                    {"player": p, "outcome": outcome, "groups": groups, "claimed_points": claimed}
                )
        others = [r["outcome"] for r in results if r["player"] != winner]
        if all(o in GONE_OUT for o in others) and self.rng.random() < 0.8:
            # Everyone else is out: the last player standing wins without a show (mostly).
            next(r for r in results if r["player"] == winner).pop("groups")
        return {"deal_no": deal_no, "wild_joker": rummy.card_name(wild), "results": results}

    def _deal500(self, seated: list[str], deal_no: int) -> dict:
        shoe = self._shoe(rummy500.decks_for(len(seated)), rummy500.JOKERS_PER_DECK)
        results = []
        goes_out = self.rng.choice(seated)
        for p in seated:
            melds = []
            for _ in range(self.rng.randint(2, 4) if p == goes_out else self.rng.randint(0, 2)):
                meld = self._meld500(shoe)
                if meld:
                    melds.append(meld)
            in_hand = [] if p == goes_out else [shoe.pop() for _ in range(self.rng.randint(1, 5))]
            results.append(
                {
                    "player": p,
                    "melded": [_names500(m) for m in melds],
                    "laid_off": [],
                    "in_hand": _names500(in_hand),
                }
            )
        return {"deal_no": deal_no, "results": results}

    def _meld500(self, shoe: list[int]) -> list[int] | None:
        for _ in range(20):
            if self.rng.random() < 0.5:
                suit, start = self.rng.randrange(4), self.rng.randrange(0, 11)
                meld = [suit * 13 + start + i for i in range(3)]
            else:
                rank = self.rng.randrange(13)
                meld = [s * 13 + rank for s in self.rng.sample(range(4), 3)]
            if all(c in shoe for c in meld):
                for c in meld:
                    shoe.remove(c)
                return meld
        return None

    # --- games ------------------------------------------------------------------------------

    def play(self, template: dict) -> dict:
        seats = min(template["seats"], len(self.players))
        n = self.rng.randint(2, seats) if seats > 2 else 2
        seated = self.rng.sample(self.players, n)
        self.count += 1
        game_id = f"sim-{self.run}-{self.count}"
        self.http.post(
            "games", {"game_id": game_id, "template": template["slug"], "players": seated}
        )
        tally = self.tallies[template["slug"]]
        deal_no = 0
        state = self.http.get(f"games/{game_id}")
        while state["status"] == "open" and deal_no < 60:
            playing = [p["player"] for p in state["players"] if not p["eliminated"]]
            if template["format"] in ("pool101", "pool201") and self._pool_moves(
                template, game_id, state, playing, deal_no, tally
            ):
                state = self._settled(game_id)
                continue
            deal_no += 1
            if template["format"] == "rummy500":
                body = self._deal500(playing, deal_no)
            else:
                body = self._deal13(template, playing, deal_no)
            self.http.post(f"games/{game_id}/deals", body)
            tally.deals += 1
            state = self._settled(game_id)
        if state["status"] == "open":
            state = self.http.post(f"games/{game_id}/cancel")
        self._record(template["slug"], game_id, state, tally)
        return state

    def _pool_moves(self, template, game_id, state, playing, deal_no, tally) -> bool:
        out = [p["player"] for p in state["players"] if p["eliminated"]]
        if out and template["rejoin_allowed"] and self.rng.random() < 0.5:
            try:
                self.http.post(f"games/{game_id}/rejoin", {"player": self.rng.choice(out)})
                tally.rejoins += 1
                return True
            except ApiError as exc:
                if exc.status != 409:
                    raise
                tally.rejoins_refused[exc.body.get("error", {}).get("code", "?")] += 1
        if (
            template["split_policy"] != "none"
            and deal_no >= 2
            and len(playing) >= 2
            and self.rng.random() < 0.15
        ):
            self.http.post(f"games/{game_id}/split")
            tally.splits += 1
            return True
        return False

    def _settled(self, game_id: str, timeout: float = 60) -> dict:
        """The game once every deal posted is settled (the game itself may go on)."""
        deadline = time.monotonic() + timeout
        while True:
            state = self.http.get(f"games/{game_id}")
            settled = all(deal["status"] == "settled" for deal in state["deals"])
            if settled or time.monotonic() > deadline:
                return state
            time.sleep(0.05)

    def _record(self, slug: str, game_id: str, state: dict, tally: Tally) -> None:
        collected, paid = Decimal(state["collected"]), Decimal(state["paid_out"])
        refunded, fee = Decimal(state["refunded"]), Decimal(state["fee"])
        tally.games += 1
        tally.collected += collected
        tally.paid_out += paid
        tally.refunded += refunded
        tally.fee += fee
        if paid + refunded + fee != collected:
            tally.unbalanced.append(game_id)
        self.say(
            f"  {slug:<16} {game_id:<16} {state['status']:<9} {len(state['players'])} players, "
            f"{state['deals_played']:>2} deals, collected {collected:>9} {state['currency']}, "
            f"paid {paid:>9}, refunded {refunded:>9}, fee {fee:>7}"
        )


def _names(groups: list[list[int]]) -> list[list[str]]:
    return [rummy.card_names(g) for g in groups]


def _names500(cards: list[int]) -> list[str]:
    return rummy.card_names(cards)
