"""Deal intake: posted deals are checked and stored, and their settlement queued after the commit.

One path, for a single post (a list of one) and a batch alike: the games of the deals are locked
and everything the checks need read in one round trip (`queries.deal_intake_views`); each deal is
checked by its format (`tournaments.games.formats`) in the order posted; the new ones are inserted
in one statement. The locks hold until the caller commits, so no one moves a game in between.
Deals stored before and not settled yet, and the earlier deals of the same call, are scored in
memory by the same pure formats as settlement scores them (`score_deal`, `apply_deal` on a
`Table`): each deal is checked against the standings they lead to (who is out, how many deals
were played, whether the game is over); nothing is settled here. Everything is decided before
anything is stored: a refused deal is answered with a 4xx and leaves no trace; a game another
transaction holds past the lock bound answers its deals 409 `busy`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction

from rummy_ledger.api.models import ApiClient
from rummy_ledger.errors import DomainError, Retryable
from tournaments import metrics
from tournaments.errors import DealExists, GameNotFound, GameNotOpen
from tournaments.games.formats import GameFormat, Table, format_of
from tournaments.games.queries import IntakeView, deal_intake_views
from tournaments.games.terms import GameTerms
from tournaments.models import Deal, Game
from tournaments.tasks import settlement_wake

# A deal of a batch: (the deal, True when stored now), its refusal, or None when it was not
# tried (the batch ran out of time).
Outcome = tuple[Deal, bool] | DomainError | None


def deal_store(*, client: ApiClient, game_id: str, payload: dict[str, Any]) -> tuple[Deal, bool]:
    """Check a posted deal (a parsed body) and store it in the caller's transaction (its own
    when there is none); its settlement is queued once that commits: (the deal, True when
    stored now). The same deal posted again (same number, same content) returns the stored
    one; another content under its number is refused (a `DomainError`), as is any deal the
    checks refuse, with nothing written."""
    # No savepoint in the caller's transaction: a refusal has written nothing to undo.
    with contextlib.nullcontext() if connection.in_atomic_block else transaction.atomic():
        [outcome] = _stored(client, [(game_id, payload)], seconds=None)
    if isinstance(outcome, DomainError):
        raise outcome
    _settlement_queued([outcome[0].pk] if outcome[1] else [])
    return outcome


def deals_store(
    *, client: ApiClient, deals: list[tuple[str, dict[str, Any]]], seconds: float
) -> list[Outcome]:
    """A batch's deals (game id, parsed body), each as `deal_store` takes it, in the order
    posted, in the caller's transaction: a refusal (contention on its game included) is that
    deal's outcome and holds up no other. Once the batch has run `seconds` after some work (a
    deal that was not a repeat), the rest are not tried (None), so that every retry makes
    progress. The deals stored are queued for settlement together once the caller commits."""
    outcomes = _stored(client, deals, seconds=seconds)
    _settlement_queued([o[0].pk for o in outcomes if isinstance(o, tuple) and o[1]])
    return outcomes


def _settlement_queued(deal_ids: list[int]) -> None:
    """The one place a stored deal's settlement is asked for: a settlement worker woken once the
    caller commits (`tournaments.tasks.settlement_wake`)."""
    if deal_ids:
        settlement_wake(deals=len(deal_ids))


def _stored(
    client: ApiClient, deals: list[tuple[str, dict[str, Any]]], seconds: float | None
) -> list[Outcome]:
    """The one path: the games locked and read, each deal decided in order, the new ones
    inserted together."""
    if not deals:
        return []
    game_ids = list(dict.fromkeys(game_id for game_id, _ in deals))
    views = deal_intake_views(client_id=client.pk, game_ids=game_ids)
    games: dict[str, _Game] = {}
    ends = time.monotonic() + (seconds or 0)
    outcomes: list[Outcome] = []
    worked = False
    for game_id, payload in deals:
        if seconds is not None and worked and time.monotonic() > ends:
            outcomes.append(None)
            continue
        try:
            outcome: Outcome = _decided(views, games, game_id, payload)
        except DomainError as refused:
            outcome = refused
        worked = worked or not (isinstance(outcome, tuple) and not outcome[1])
        outcomes.append(outcome)
    _inserted([o[0] for o in outcomes if isinstance(o, tuple) and o[1]])
    return outcomes


@dataclass
class _Seat:
    """A seat as the formats see it, its standings changed in memory only."""

    external_id: str
    score: int
    eliminated: bool


@dataclass
class _Game:
    """A locked game as the checks see it: its standings once its deals not settled yet are
    scored (in memory), and its deals by number (hash, the deal), this call's new ones too."""

    pk: int
    status: str
    terms: GameTerms
    format: GameFormat
    collected: Any
    seats: list[_Seat]
    played: int
    deals: dict[int, tuple[str, Deal]] = field(default_factory=dict)

    @classmethod
    def of(cls, view: IntakeView) -> _Game:
        terms = GameTerms.from_json(view.terms)
        game = cls(view.game_pk, view.status, terms, format_of(terms.format), view.collected,
                   [_Seat(*seat) for seat in view.seats], view.deals_played)  # fmt: skip
        for no, (digest, status, pk) in view.deals.items():
            game.deals[no] = digest, Deal(id=pk, game_id=game.pk, deal_no=no, status=status)
        for wild, results in view.pending:  # scored as settlement will score them
            game.play(results, game.format.score_deal(terms, wild, results).points)
        return game

    def play(self, results: list[dict[str, Any]], points: dict[str, int]) -> None:
        """A deal's effect on the standings; the game is over when the format says so."""
        if self.status != Game.Status.OPEN:
            return  # settlement scores nothing after the deal that ended the game
        self.played += 1
        table = Table(self.terms, self.seats, self.collected, self.played)
        if self.format.apply_deal(table, results, points) is not None:
            self.status = Game.Status.FINISHED


def _decided(
    views: dict[str, IntakeView], games: dict[str, _Game], game_id: str, payload: dict[str, Any]
) -> tuple[Deal, bool]:
    """A deal stored before with this content (False), or a new one checked (True, no pk yet:
    the game's standings now count it); a refusal is raised."""
    view = views.get(game_id)
    if view is None:
        raise GameNotFound(f"no game {game_id!r}")
    if view.busy:
        raise Retryable(
            f"game {game_id!r} is busy (a lock wait ran out); nothing was written. Retry shortly."
        )
    if game_id not in games:
        games[game_id] = _Game.of(view)
    game = games[game_id]
    digest = _payload_hash(payload)
    deal_no = payload["deal_no"]
    if deal_no in game.deals:
        return _same_or_refused(*game.deals[deal_no], digest), False
    if game.status != Game.Status.OPEN:
        raise GameNotOpen(f"game {game_id!r} is {game.status}", details={"status": game.status})
    checked = game.format.check_deal(
        terms=game.terms,
        players=[seat.external_id for seat in game.seats],
        eliminated=[seat.external_id for seat in game.seats if seat.eliminated],
        expected_no=game.played + 1,
        payload=payload,
    )
    deal = Deal(
        game_id=game.pk,
        deal_no=checked.deal_no,
        wild_joker=checked.wild_joker,
        results=checked.results,
        payload_hash=digest,
        status=Deal.Status.STORED,
    )
    game.deals[deal_no] = digest, deal
    game.play(checked.results, checked.score.points)
    return deal, True


def _payload_hash(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def _same_or_refused(existing_hash: str, existing: Deal, digest: str) -> Deal:
    if existing_hash == digest:
        return existing
    raise DealExists(
        f"deal {existing.deal_no} was already posted with other results",
        details={"deal_no": existing.deal_no},
    )


def _inserted(deals: list[Deal]) -> None:
    """The new deals' rows, in one plain INSERT (their ids set on them)."""
    if not deals:
        return
    rows = [[d.game_id, d.deal_no, d.wild_joker, d.results, d.payload_hash] for d in deals]
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {Deal._meta.db_table} (game_id, deal_no, wild_joker, results,"
            " payload_hash, points, discrepancies, status, created_at)"
            " SELECT (r->>0)::bigint, (r->>1)::integer, r->>2, r->3, r->>4,"
            " '{}'::jsonb, '{}'::jsonb, %s, now()"
            " FROM jsonb_array_elements(%s::jsonb) AS u(r) RETURNING game_id, deal_no, id",
            [Deal.Status.STORED, json.dumps(rows)],
        )
        ids = {(game, no): pk for game, no, pk in cursor.fetchall()}
    for deal in deals:
        deal.pk = ids[deal.game_id, deal.deal_no]
    metrics.deal_stored(len(deals))
