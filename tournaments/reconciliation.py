"""The games' part of the nightly reconciliation, registered with the ledger's runner: finished
games leave nothing in escrow and pay out exactly what they collected, no game stays open too
long, no deal result waits unsettled. After a month close, the games finished since it (the
ledger's pass starts there too: `ctx["since"]`); an escrow's flows are the close's plus those
since.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from tournaments.models import Deal, Game, Registration, Ticket, Tournament, TournamentEscrow
from tournaments.references import game_reference
from wallets.models import MonthCloseBalance, Reversal
from wallets.reconciliation import Check

_TABLES = {
    "game": Game._meta.db_table,
    "deal": Deal._meta.db_table,
    "reversal": Reversal._meta.db_table,
    "tournament": Tournament._meta.db_table,
    "registration": Registration._meta.db_table,
    "tescrow": TournamentEscrow._meta.db_table,
    "closes": MonthCloseBalance._meta.db_table,
    "ticket": Ticket._meta.db_table,
}
SINCE_CLOSE = "(%(since)s::timestamptz IS NULL OR g.finished_at >= %(since)s)"


# The games finished since the last close (every one before the first), each with its escrow's
# flows: what it received and paid out, from the ledger's one pass over the entries
# (`ctx["escrow_flows"]`: the escrows' accounts, ins and outs, three arrays), so these checks read
# no entry and no account; for an escrow that did not move since the close (rare), the close's.
FINISHED_GAMES = """
  FROM {game} g
  LEFT JOIN unnest(%(escrows)s::bigint[], %(escrows_in)s::numeric[], %(escrows_out)s::numeric[])
            AS r(account_id, expected, actual) ON r.account_id = g.escrow_id
  -- looked up by key, only where needed; OFFSET 0 keeps it a lookup per game: flattened into a
  -- join, the plan hashed every balance of the close (every account ever opened) to find none
  LEFT JOIN LATERAL (SELECT c.inflow, c.balance FROM {closes} c
                      WHERE r.account_id IS NULL AND c.close_id = %(close)s
                        AND c.account_id = g.escrow_id AND c.currency = g.currency
                     OFFSET 0) c ON true
 WHERE g.status IN ('finished', 'cancelled', 'reversed') AND {since_close}
"""

# A finished game's escrow holds nothing, by its entries (the pass has compared each moved
# escrow's cached balance with them already).
ESCROW_NOT_EMPTY = (
    """
SELECT 'escrow_not_empty', 'game ' || g.game_id, 0,
       coalesce(r.expected - r.actual, c.balance, 0), g.currency,
       jsonb_build_object('game_pk', g.id, 'status', g.status,
                          'escrow', (SELECT a.code FROM wallets_account a
                                      WHERE a.id = g.escrow_id))"""
    + FINISHED_GAMES
    + """
   AND coalesce(r.expected - r.actual, c.balance, 0) <> 0
"""
)

# What the game recorded must balance (payouts + fee + refunds == collected), and must be what
# its escrow really received and paid out. A game reversed as a whole (an approved reversal) has
# mirrored flows: only its recorded figures are checked.
GAME_UNBALANCED = (
    """
SELECT 'game_unbalanced', 'game ' || g.game_id, g.collected,
       g.paid_out + g.fee + g.refunded, g.currency,
       jsonb_build_object('game_pk', g.id, 'status', g.status,
                          'collected', g.collected::text, 'paid_out', g.paid_out::text,
                          'fee', g.fee::text, 'refunded', g.refunded::text,
                          'escrow_in', coalesce(r.expected, c.inflow, 0)::text,
                          'escrow_out', coalesce(r.actual, c.inflow - c.balance, 0)::text)"""
    + FINISHED_GAMES
    + """
   AND (g.paid_out + g.fee + g.refunded <> g.collected
        OR ((coalesce(r.expected, c.inflow, 0) <> g.collected
             OR coalesce(r.actual, c.inflow - c.balance, 0) <> g.paid_out + g.fee + g.refunded)
            AND NOT EXISTS (SELECT 1 FROM {reversal} v
                             WHERE v.reference = %(game_reference)s || g.id
                               AND v.status = 'approved')))
"""
)

GAME_STUCK = """
SELECT 'game_stuck', 'game ' || g.game_id, NULL, NULL, g.currency,
       jsonb_build_object('game_pk', g.id, 'opened', g.created_at,
                          'deals_played', g.deals_played)
  FROM {game} g
 WHERE g.status = 'open' AND g.created_at < %(stuck_before)s
"""

DEAL_UNSETTLED = """
SELECT 'deal_unsettled', 'game ' || g.game_id || ' deal ' || d.deal_no, NULL, NULL,
       g.currency, jsonb_build_object('deal_pk', d.id, 'game_pk', g.id, 'stored', d.created_at)
  FROM {deal} d JOIN {game} g ON g.id = d.game_id
 WHERE d.status = 'stored' AND d.created_at < %(unsettled_before)s
"""


# A finished tournament paid collected + overlay = prizes + fee, and its players' prizes add up
# to what it paid; a cancelled one refunded what it collected.
TOURNAMENT_UNBALANCED = """
SELECT 'tournament_unbalanced', 'tournament ' || t.slug,
       t.collected + CASE WHEN t.status = 'finished' THEN t.overlay ELSE 0 END,
       CASE WHEN t.status = 'finished' THEN t.prizes_paid + t.fee ELSE t.refunded END,
       t.currency,
       jsonb_build_object('tournament_pk', t.id, 'status', t.status,
                          'collected', t.collected::text, 'overlay', t.overlay::text,
                          'fee', t.fee::text, 'prizes', t.prizes_paid::text,
                          'prizes_to_players', coalesce(p.total, 0)::text,
                          'refunded', t.refunded::text)
  FROM {tournament} t
  LEFT JOIN (SELECT tournament_id, sum(prize) AS total FROM {registration}
              WHERE status = 'registered' GROUP BY tournament_id) p ON p.tournament_id = t.id
 WHERE (t.status = 'finished'
        AND (t.collected + t.overlay <> t.prizes_paid + t.fee
             OR coalesce(p.total, 0) <> t.prizes_paid))
    OR (t.status = 'cancelled' AND t.refunded <> t.collected)
"""

TOURNAMENT_ESCROW_NOT_EMPTY = """
SELECT 'tournament_escrow_not_empty', 'tournament ' || t.slug, 0,
       sum(a.balance), t.currency, jsonb_build_object('tournament_pk', t.id, 'status', t.status)
  FROM {tournament} t
  JOIN {tescrow} e ON e.tournament_id = t.id
  JOIN wallets_account a ON a.id = e.account_id
 WHERE t.status IN ('finished', 'cancelled')
 GROUP BY t.id, t.slug, t.currency, t.status
HAVING sum(a.balance) <> 0
"""

# The tickets outstanding in the books are the active tickets: a tournament's tickets account
# holds exactly their value, and none is active once it has started or been cancelled.
TICKETS_OUTSTANDING = """
SELECT 'tickets_outstanding', 'tournament ' || t.slug, coalesce(k.total, 0),
       a.balance, t.currency,
       jsonb_build_object('tournament_pk', t.id, 'status', t.status, 'active', coalesce(k.n, 0),
                          'account', a.code)
  FROM {tournament} t
  JOIN wallets_account a ON a.id = t.tickets_account_id
  LEFT JOIN (SELECT tournament_id, sum(value) AS total, count(*) AS n FROM {ticket}
              WHERE status = 'active' GROUP BY tournament_id) k ON k.tournament_id = t.id
 WHERE a.balance <> coalesce(k.total, 0)
    OR (t.status <> 'registering' AND coalesce(k.n, 0) > 0)
"""

TOURNAMENT_STUCK = """
SELECT 'tournament_stuck', 'tournament ' || t.slug, NULL, NULL, t.currency,
       jsonb_build_object('tournament_pk', t.id, 'started', t.started_at, 'round', t.round)
  FROM {tournament} t
 WHERE t.status = 'running' AND t.started_at < %(tournament_stuck_before)s
"""


def _check(sql: str):
    def check(cursor, ctx: dict) -> list[tuple]:
        now = timezone.now()
        params = {
            "since": ctx.get("since"),
            "close": ctx.get("close"),
            "game_reference": game_reference(""),
            "stuck_before": now - timedelta(hours=settings.RECONCILE_STUCK_GAME_HOURS),
            "unsettled_before": now - timedelta(minutes=settings.RECONCILE_UNSETTLED_DEAL_MINUTES),
            "tournament_stuck_before": now
            - timedelta(hours=settings.RECONCILE_STUCK_TOURNAMENT_HOURS),
        }
        params["escrows"], params["escrows_in"], params["escrows_out"] = ctx["escrow_flows"]
        cursor.execute(sql.format(**_TABLES, since_close=SINCE_CLOSE), params)
        return cursor.fetchall()

    return check


CHECKS = [
    Check(
        "finished games' escrow",
        _check(ESCROW_NOT_EMPTY),
        {"escrow_not_empty": "finished game's escrow not empty"},
    ),
    Check(
        "games collected vs paid",
        _check(GAME_UNBALANCED),
        {"game_unbalanced": "payouts + fee + refunds differ from collected"},
    ),
    Check("games open too long", _check(GAME_STUCK), {"game_stuck": "game open too long"}),
    Check(
        "deals not settled",
        _check(DEAL_UNSETTLED),
        {"deal_unsettled": "deal stored but not settled"},
    ),
    Check(
        "tournaments collected vs paid",
        _check(TOURNAMENT_UNBALANCED),
        {
            "tournament_unbalanced": "collected + overlay differ from prizes + fee "
            "(cancelled: from refunds)"
        },
    ),
    Check(
        "finished tournaments' escrow",
        _check(TOURNAMENT_ESCROW_NOT_EMPTY),
        {"tournament_escrow_not_empty": "finished or cancelled tournament's escrow not empty"},
    ),
    Check(
        "tickets outstanding",
        _check(TICKETS_OUTSTANDING),
        {
            "tickets_outstanding": "a tournament's tickets account differs from its active "
            "tickets (or tickets active after its start)"
        },
    ),
    Check(
        "tournaments running too long",
        _check(TOURNAMENT_STUCK),
        {"tournament_stuck": "tournament running longer than RECONCILE_STUCK_TOURNAMENT_HOURS"},
    ),
]
