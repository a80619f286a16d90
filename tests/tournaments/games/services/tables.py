"""Games for the game services' tests: opened by the service (`opening.game_open`), with their
deals stored as the intake stores them; and a lock held on another connection. Plain functions
over tests/builders.py and tests/concurrency.py."""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from django.db import transaction
from hypothesis import strategies as st

from tests.builders import LOSER_22, WILD, WINNER, funded_player, res, template
from tests.concurrency import run_in_threads
from tournaments.games.formats import format_of
from tournaments.games.services.opening import game_open
from tournaments.models import Deal, Game, GameTemplate

POOL = "pool-101"  # entry 100.00, fee 10 %: two players collect 200.00
POINTS = "points-1"  # point value 1.00: a stake of 80.00 each, fee 10 %


def templates() -> None:
    """The two templates the tests open games from (once per test)."""
    if not GameTemplate.objects.filter(slug=POOL).exists():
        template(POOL, "pool101")
    if not GameTemplate.objects.filter(slug=POINTS).exists():
        template(POINTS, "points", point_value=Decimal("1.00"))


def opened(
    client, game_id: str, slug: str, players: tuple[str, ...], funds: str = "500.00"
) -> Game:
    """A game of `slug` opened for `players`, each funded with `funds` first."""
    templates()
    for player in players:
        funded_player(player, funds)
    game, _ = game_open(client=client, game_id=game_id, template_slug=slug, players=list(players))
    return game


def points_deal(winner: str, loser: str) -> dict[str, Any]:
    """Deal 1 of a two-player points game: `loser` counts 22 points (a copy: a test may
    change it)."""
    results = [res(winner, "declared", WINNER), res(loser, "lost", LOSER_22)]
    return copy.deepcopy({"deal_no": 1, "wild_joker": WILD, "results": results})


def pool_deal(deal_no: int, winner: str, loser: str) -> dict[str, Any]:
    """A pool deal: `loser` shows wrong (80 points: out of a pool 101 after two of them)."""
    results = [res(winner, "declared", WINNER), res(loser, "wrong_show")]
    return copy.deepcopy({"deal_no": deal_no, "wild_joker": WILD, "results": results})


def pool3_deal(deal_no: int, *, y: bool = True) -> dict[str, Any]:
    """A deal of a 3-player pool 101 game: x declares, y shows wrong (80: out after two), z
    drops first (20); without y once y is out."""
    results = [res("x", "declared", WINNER), res("z", "first_drop")]
    if y:
        results.insert(1, res("y", "wrong_show"))
    return {"deal_no": deal_no, "wild_joker": "KD", "results": results}


# What a deal of a plan may be (`pool_deal_of_kind`), and plans of deals: (game, number, kind).
KINDS = ["ok", "other", "bad_card", "no_game"]
PLANS = st.lists(
    st.tuples(st.integers(0, 2), st.integers(1, 3), st.sampled_from(KINDS)), min_size=1, max_size=8
)


def pool_deal_of_kind(prefix: str, game: int, deal_no: int, kind: str) -> dict[str, Any]:
    """A deal of pool game `{prefix}g{game}` (of players `{prefix}x{game}` and `{prefix}y{game}`)
    with its `game_id`: x shows and y shows wrong (80 points: out after two), or the other way
    round ("other"), a card that is none ("bad_card"), or a game that does not exist
    ("no_game")."""
    x, y = f"{prefix}x{game}", f"{prefix}y{game}"
    results = [res(x, "declared", WINNER), res(y, "wrong_show")]
    if kind == "other":
        results = [res(x, "wrong_show"), res(y, "declared", WINNER)]
    if kind == "bad_card":
        results[0] = res(x, "declared", [["1H", *WINNER[0][1:]], *WINNER[1:]])
    game_id = f"{prefix}g{game}" if kind != "no_game" else f"{prefix}none"
    return {"game_id": game_id, "deal_no": deal_no, "wild_joker": "KD", "results": results}


def stored(game: Game, payload: dict[str, Any]) -> Deal:
    """The deal stored as the intake stores it (checked by its format, status stored), without
    the intake's order check against the deals already settled: how a second deal waits behind
    a first one that is not settled yet."""
    terms = game.game_terms
    seats = list(game.players.select_related("player").order_by("seat"))
    checked = format_of(terms.format).check_deal(
        terms=terms,
        players=[s.player.external_id for s in seats],
        eliminated=[s.player.external_id for s in seats if s.eliminated],
        expected_no=payload["deal_no"],
        payload=payload,
    )
    return Deal.objects.create(
        game=game,
        deal_no=checked.deal_no,
        wild_joker=checked.wild_joker,
        results=checked.results,
        payload_hash=f"hash-{game.pk}-{checked.deal_no}",
    )


def while_held(hold: Callable[[], object], run: Callable[[], object]) -> object:
    """What `run()` returns (or raises) on its own connection while another connection holds
    what `hold()` took (a row lock, a claimed key) in a transaction still open, rolled back
    once `run` is done."""
    held, done = threading.Event(), threading.Event()

    def work(n: int) -> object:
        if n == 0:
            try:
                with transaction.atomic():
                    hold()
                    held.set()
                    done.wait(10)
                    transaction.set_rollback(True)
            finally:
                held.set()  # also when `hold` failed: `run` need not wait for nothing
            return None
        held.wait(10)
        try:
            return run()
        finally:
            done.set()

    holder, outcome = run_in_threads(work, 2)
    if isinstance(holder, Exception):
        raise holder
    return outcome
