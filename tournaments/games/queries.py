"""The games' hot-path and report reads: plain SQL where the ORM's query building would cost
more than the query (settlement), or where PostgreSQL does the work in one statement (the fee
report). Settlement's one write is `tournaments/games/services/write_back.py`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from django.conf import settings
from django.db import connection
from djmoney.money import Money

from rummy_ledger.db import read_connection
from tournaments.models import Deal, Game, GamePlayer, GameTemplate
from wallets.models import (
    CASH,
    Account,
    ClientPairing,
    Entry,
    Player,
    PlayerClient,
    ProposalStatus,
    ProtectionChange,
    Transfer,
    WindDown,
)
from wallets.services.flows import PairFlow


def games_with_stored_deals_locked(*, skip: list[int], limit: int) -> list[Game]:
    """Up to `limit` games with stored deals, oldest deal first, whose lock is free now
    (except the games `skip` names).

    LIMIT and SKIP LOCKED sit on the same query, so two workers take two disjoint batches.
    """
    stored = Deal.objects.filter(status=Deal.Status.STORED).order_by("created_at")
    if skip:
        stored = stored.exclude(game_id__in=skip)
    candidates = stored.values("game_id")[: limit * 8]  # by the partial index of stored deals
    games = Game.objects.select_for_update(of=("self",), skip_locked=True)
    return list(games.filter(pk__in=candidates).order_by("pk")[:limit])


@dataclass(frozen=True)
class IntakeView:
    """A game as a deal's checks read it, locked: its status, terms, deals played and money
    collected, its deals by number (hash, status, id), its seats (external id, score,
    eliminated) in seat order, and its stored deals not settled yet (wild joker, results) in
    deal order; or `busy`, when another transaction held it past the lock bound (nothing else
    read)."""

    game_pk: int
    busy: bool
    status: str = ""
    terms: dict | None = None
    deals_played: int = 0
    collected: Decimal = Decimal(0)
    deals: dict[int, tuple[str, str, int]] | None = None
    seats: list[tuple[str, int, bool]] | None = None
    pending: list[tuple[str, list[dict]]] | None = None


# Two statements in one round trip: the games locked (deal_games_lock,
# migrations/0014_deal_games_lock.pg.sql), then read in a snapshot taken after the locks were
# granted (a read in the locking statement would not see what the previous holder committed).
_INTAKE_VIEWS = f"""
SELECT game_id FROM deal_games_lock(%(client)s, %(game_ids)s) WHERE NOT locked;
SELECT g.game_id, g.id, g.status, g.terms, g.deals_played, g.collected, dl.deals, dl.pending,
       (SELECT json_agg(json_build_array(
                   (SELECT p.external_id FROM {Player._meta.db_table} p WHERE p.id = gp.player_id),
                   gp.score, gp.eliminated) ORDER BY gp.seat)
          FROM {GamePlayer._meta.db_table} gp WHERE gp.game_id = g.id)
  FROM {Game._meta.db_table} g
  LEFT JOIN LATERAL (
       SELECT json_agg(json_build_array(d.deal_no, d.payload_hash, d.status, d.id)) AS deals,
              json_agg(json_build_array(d.wild_joker, d.results) ORDER BY d.deal_no)
                 FILTER (WHERE d.status = %(stored)s) AS pending
         FROM {Deal._meta.db_table} d WHERE d.game_id = g.id) dl ON true
 WHERE g.client_id = %(client)s AND g.game_id = ANY(%(game_ids)s)
"""


def deal_intake_views(*, client_id: int, game_ids: Sequence[str]) -> dict[str, IntakeView]:
    """The deal intake's one read (tournaments.games.services.intake): these games of the
    client, locked until the caller's transaction ends (those another transaction held past
    the lock bound: `busy`), by game id; a game not there is not the client's."""
    params = {"client": client_id, "game_ids": list(game_ids), "stored": Deal.Status.STORED}
    with connection.cursor() as cursor:
        cursor.execute(_INTAKE_VIEWS, params)
        busy = {game_id for (game_id,) in cursor.fetchall()}
        cursor.nextset()
        rows = cursor.fetchall()
    return {row[0]: _intake_view(row, busy) for row in rows}


def _intake_view(row: tuple, busy: set[str]) -> IntakeView:
    game_id, pk, status, terms, played, collected, deals, pending, seats = row
    if game_id in busy:
        return IntakeView(game_pk=pk, busy=True)
    return IntakeView(
        game_pk=pk,
        busy=False,
        status=status,
        terms=_json(terms),
        deals_played=played,
        collected=collected,
        deals={no: (digest, state, deal_pk) for no, digest, state, deal_pk in _json(deals) or []},
        seats=[(ext, score, elim) for ext, score, elim in _json(seats) or []],
        pending=[(wild, results) for wild, results in _json(pending) or []],
    )


@dataclass(frozen=True)
class Candidate:
    """A player as a game's opening reads them: the row, the wallet accounts by bucket, the
    self-exclusion values in the order set, and whether a payments client paired with the
    opening's client reported them (`wallets.services.client_guards`)."""

    player: Player
    accounts: dict[str, Account]
    exclusions: list[str]
    paired: bool


@dataclass(frozen=True)
class OpenView:
    """What a game's opening reads, as of one moment (no lock): the active template (None: no
    such), the status of a game already holding the id, the registered players, the ids the
    game and its escrow account will have, and the approved wind-down not finished yet (its
    id, or None: `wallets.services.wind_down.wind_down_check`)."""

    template: GameTemplate | None
    existing_status: str | None
    players: dict[str, Candidate]
    game_pk: int
    escrow_pk: int
    wind_down: int | None


_TEMPLATE_FIELDS = GameTemplate._meta.concrete_fields
_OPEN_VIEW = f"""
SELECT {", ".join(f"t.{f.column}" for f in _TEMPLATE_FIELDS)},
       (SELECT g.status FROM {Game._meta.db_table} g
         WHERE g.client_id = %(client)s AND g.game_id = %(game_id)s),
       (SELECT json_agg(json_build_array(p.id, p.external_id, p.region,
           (SELECT json_agg(json_build_array(a.bucket, a.id, a.balance::text, a.balance_currency))
              FROM {Account._meta.db_table} a WHERE a.player_id = p.id AND a.kind = %(player)s),
           (SELECT json_agg(c.new_value ORDER BY c.id) FROM {ProtectionChange._meta.db_table} c
             WHERE c.player_id = p.id AND c.kind = %(exclusion)s),
           EXISTS (SELECT 1 FROM {PlayerClient._meta.db_table} pc
                     JOIN {ClientPairing._meta.db_table} cp ON cp.payments_client_id = pc.client_id
                    WHERE pc.player_id = p.id AND cp.games_client_id = %(client)s)))
          FROM {Player._meta.db_table} p WHERE p.external_id = ANY(%(players)s)),
       nextval(pg_get_serial_sequence('{Game._meta.db_table}', 'id')),
       nextval(pg_get_serial_sequence('{Account._meta.db_table}', 'id')),
       (SELECT w.id FROM {WindDown._meta.db_table} w
         WHERE w.status = %(approved)s AND w.finished_at IS NULL
         ORDER BY w.decided_at DESC LIMIT 1)
  FROM (SELECT 1) one
  LEFT JOIN {GameTemplate._meta.db_table} t ON t.slug = %(slug)s AND t.active
"""


def game_open_view(
    *, client_id: int, game_id: str, template_slug: str, players: list[str]
) -> OpenView:
    """The game opening's one read (tournaments.games.services.opening)."""
    params = {"client": client_id, "game_id": game_id, "slug": template_slug, "players": players,
              "player": Account.Kind.PLAYER,
              "exclusion": ProtectionChange.Kind.SELF_EXCLUSION,
              "approved": ProposalStatus.APPROVED}  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute(_OPEN_VIEW, params)
        row = cursor.fetchone()
    n = len(_TEMPLATE_FIELDS)
    template = None
    if row[0] is not None:
        values = [
            f.from_db_value(v, None, connection) if hasattr(f, "from_db_value") else v
            for f, v in zip(_TEMPLATE_FIELDS, row[:n], strict=True)
        ]
        template = GameTemplate.from_db("default", [f.attname for f in _TEMPLATE_FIELDS], values)
    existing, found, game_pk, escrow_pk, wind_down = row[n:]
    candidates = {}
    for pk, external_id, region, accounts, exclusions, paired in _json(found) or []:
        player = Player(id=pk, external_id=external_id, region=region)
        candidates[external_id] = Candidate(
            player=player,
            accounts={
                bucket: Account(
                    id=account_pk,
                    kind=Account.Kind.PLAYER,
                    player_id=pk,
                    bucket=bucket,
                    balance=Money(Decimal(balance), currency),
                )
                for bucket, account_pk, balance, currency in accounts or []
            },
            exclusions=exclusions or [],
            paired=paired,
        )
    return OpenView(
        template=template,
        existing_status=existing,
        players=candidates,
        game_pk=game_pk,
        escrow_pk=escrow_pk,
        wind_down=wind_down,
    )


def _json(value):
    return json.loads(value) if isinstance(value, str) else value


@dataclass(frozen=True)
class Seating:
    """Every seat of some games, and the wallet accounts of the players in them."""

    seats: dict[int, list[GamePlayer]]  # game pk -> its seats, in seat order
    accounts: dict[int, dict[str, int]]  # player pk -> bucket -> account id


def seating(game_ids: Sequence[int]) -> Seating:
    """Every seat of these games with its player, and each player's wallet account ids, in one
    query: the settlement hot path reads nothing else about players."""
    sql = f"""
        SELECT gp.id, gp.game_id, gp.player_id, p.external_id, gp.seat, gp.score, gp.eliminated,
               gp.rejoins, gp.entries, gp.contributed, gp.payout, gp.refund,
               (SELECT array_agg(a.bucket || ':' || a.id) FROM {Account._meta.db_table} a
                 WHERE a.player_id = gp.player_id AND a.kind = 'player')
          FROM {GamePlayer._meta.db_table} gp JOIN {Player._meta.db_table} p ON p.id = gp.player_id
         WHERE gp.game_id = ANY(%s) ORDER BY gp.game_id, gp.seat"""
    seats: dict[int, list[GamePlayer]] = {pk: [] for pk in game_ids}
    accounts: dict[int, dict[str, int]] = {}
    with connection.cursor() as cursor:
        cursor.execute(sql, [list(game_ids)])
        for row in cursor.fetchall():
            pk, game_id, player_id, ext, seat_no, score, elim, rejoins, entries, contrib = row[:10]
            seat = GamePlayer(
                id=pk,
                game_id=game_id,
                player=Player(id=player_id, external_id=ext),
                seat=seat_no,
                score=score,
                eliminated=elim,
                rejoins=rejoins,
                entries=entries,
                contributed=json.loads(contrib) if isinstance(contrib, str) else contrib,
                payout=row[10],
                refund=row[11],
            )
            accounts[player_id] = {
                bucket: int(account_id)
                for bucket, account_id in (item.rsplit(":", 1) for item in row[12] or [])
            }
            seats[game_id].append(seat)
    return Seating(seats=seats, accounts=accounts)


def game_transfer_ids(game: Game) -> list[int]:
    """Every transfer that moved money in or out of the game's escrow (reversals left aside)."""
    return sorted(
        Entry.objects.filter(account_id=game.escrow_id)
        .exclude(transfer__kind=Transfer.Kind.REVERSAL)
        .values_list("transfer_id", flat=True)
        .distinct()
    )


FEE_REPORT_SQL = f"""
SELECT (f.created_at AT TIME ZONE %(tz)s)::date AS day, g.format, f.amount_currency,
       sum(f.amount) AS fee, count(DISTINCT g.id) AS games
  FROM {Entry._meta.db_table} f
  JOIN {Entry._meta.db_table} x ON x.transfer_id = f.transfer_id AND x.account_id <> f.account_id
  JOIN {Game._meta.db_table} g ON g.escrow_id = x.account_id
 WHERE f.account_id = %(fee_account)s AND f.created_at >= %(start)s AND f.created_at < %(end)s
 GROUP BY 1, 2, 3
 ORDER BY 1, 2, 3
"""


def fee_report_rows(*, fee_account_id: int, start: datetime, end: datetime) -> list[dict]:
    """Fee earned per day (platform time zone) and format in [start, end); reversals net out."""
    with read_connection().cursor() as cursor:  # the fee report's: the standby's
        cursor.execute(
            FEE_REPORT_SQL,
            {"tz": settings.TIME_ZONE, "fee_account": fee_account_id, "start": start, "end": end},
        )
        return [
            {"day": day, "format": fmt, "currency": cur, "fee": fee, "games": games}
            for day, fmt, cur, fee, games in cursor.fetchall()
        ]


# What each seat of a finished cash game lost (paid in - refund - prize), attributed to the
# game's prize winners in proportion to their prizes; summed per (loser, winner) pair, with
# what went the other way. The one-way-flow report's finder (wallets.services.flows).
_PAIR_FLOWS = """
WITH seat AS (
    SELECT gp.game_id, gp.player_id, gp.payout, g.finished_at,
           (SELECT COALESCE(sum((c ->> 1)::numeric), 0) FROM jsonb_array_elements(gp.contributed) c)
               - gp.refund - gp.payout AS lost
    FROM {seats} gp JOIN {games} g ON g.id = gp.game_id
    WHERE g.status = %(finished)s AND g.currency = %(cash)s AND g.finished_at >= %(since)s
), prizes AS (
    SELECT game_id, sum(payout) AS total FROM seat WHERE payout > 0 GROUP BY game_id
), flow AS (
    SELECT l.player_id AS loser, w.player_id AS winner, l.finished_at,
           l.lost * w.payout / p.total AS amount
    FROM seat l
    JOIN prizes p ON p.game_id = l.game_id
    JOIN seat w ON w.game_id = l.game_id AND w.player_id <> l.player_id AND w.payout > 0
    WHERE l.lost > 0
), pair AS (
    SELECT loser, winner, count(*) AS games, sum(amount) AS amount,
           min(finished_at) AS first_at, max(finished_at) AS last_at
    FROM flow GROUP BY loser, winner
)
SELECT a.loser, a.winner, a.games, round(a.amount, 2), round(COALESCE(b.amount, 0), 2),
       a.first_at, a.last_at
FROM pair a LEFT JOIN pair b ON b.loser = a.winner AND b.winner = a.loser
ORDER BY a.loser, a.winner
"""


def pair_flows(since: datetime) -> list[PairFlow]:
    """Per (loser, winner) pair of cash games finished since `since`: what went across."""
    sql = _PAIR_FLOWS.format(seats=GamePlayer._meta.db_table, games=Game._meta.db_table)
    params = {"finished": Game.Status.FINISHED, "cash": CASH, "since": since}
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [PairFlow(*row) for row in cursor.fetchall()]
