"""The games' part of the nightly reconciliation, registered with the ledger's runner: finished
games leave nothing in escrow and pay out exactly what they collected, no game stays open too
long, no deal result waits unsettled.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from tournaments.models import Deal, Game
from tournaments.references import game_reference
from wallets.models import Reversal
from wallets.reconciliation import Check, register
from wallets.reconciliation.discrepancies import INSERT

_TABLES = {
    "game": Game._meta.db_table,
    "deal": Deal._meta.db_table,
    "reversal": Reversal._meta.db_table,
}


ESCROW_NOT_EMPTY = """
SELECT %(report)s, 'escrow_not_empty', 'game ' || g.game_id, 0, a.balance, a.balance_currency,
       jsonb_build_object('game_pk', g.id, 'status', g.status, 'escrow', a.code)
  FROM {game} g JOIN wallets_account a ON a.id = g.escrow_id
 WHERE g.status IN ('finished', 'cancelled', 'reversed') AND a.balance <> 0
"""

# What the game recorded must balance (payouts + fee + refunds == collected), and must be what
# its escrow really received and paid out: those flows come from the ledger's one pass over the
# entries (`recon_ledger`, rows '_escrow': expected = in, actual = out), so this check reads no
# entry. A game reversed as a whole (an approved reversal) has mirrored flows: only its
# recorded figures are checked.
GAME_UNBALANCED = """
SELECT %(report)s, 'game_unbalanced', 'game ' || g.game_id, g.collected,
       g.paid_out + g.fee + g.refunded, g.currency,
       jsonb_build_object('game_pk', g.id, 'status', g.status,
                          'collected', g.collected::text, 'paid_out', g.paid_out::text,
                          'fee', g.fee::text, 'refunded', g.refunded::text,
                          'escrow_in', coalesce(r.expected, 0)::text,
                          'escrow_out', coalesce(r.actual, 0)::text)
  FROM {game} g
  LEFT JOIN recon_ledger r ON r.kind = '_escrow' AND r.account_id = g.escrow_id
 WHERE g.status IN ('finished', 'cancelled', 'reversed')
   AND (g.paid_out + g.fee + g.refunded <> g.collected
        OR ((coalesce(r.expected, 0) <> g.collected
             OR coalesce(r.actual, 0) <> g.paid_out + g.fee + g.refunded)
            AND NOT EXISTS (SELECT 1 FROM {reversal} v
                             WHERE v.reference = %(game_reference)s || g.id
                               AND v.status = 'approved')))
"""

GAME_STUCK = """
SELECT %(report)s, 'game_stuck', 'game ' || g.game_id, NULL, NULL, g.currency,
       jsonb_build_object('game_pk', g.id, 'opened', g.created_at,
                          'deals_played', g.deals_played)
  FROM {game} g
 WHERE g.status = 'open' AND g.created_at < %(stuck_before)s
"""

DEAL_UNSETTLED = """
SELECT %(report)s, 'deal_unsettled', 'game ' || g.game_id || ' deal ' || d.deal_no, NULL, NULL,
       g.currency, jsonb_build_object('deal_pk', d.id, 'game_pk', g.id, 'stored', d.created_at)
  FROM {deal} d JOIN {game} g ON g.id = d.game_id
 WHERE d.status = 'stored' AND d.created_at < %(unsettled_before)s
"""


def _check(sql: str):
    def check(cursor, ctx: dict) -> int:
        now = timezone.now()
        params = {
            "report": ctx["report_id"],
            "game_reference": game_reference(""),
            "stuck_before": now - timedelta(hours=settings.RECONCILE_STUCK_GAME_HOURS),
            "unsettled_before": now - timedelta(minutes=settings.RECONCILE_UNSETTLED_DEAL_MINUTES),
        }
        cursor.execute(INSERT + sql.format(**_TABLES), params)
        return cursor.rowcount

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
]


def register_checks() -> None:
    """Called by the app's ready(): the ledger's runner runs these after its own checks."""
    for check in CHECKS:
        register(check)
