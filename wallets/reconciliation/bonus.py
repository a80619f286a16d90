"""Bonus: every player's bonus bucket holds exactly the remaining of their bonus lots (what
entries, refunds, expiries and reversals did to one, they did to the other), and no lot has
been left unreturned long after it expired (the hourly beat job returns them)."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from wallets.reconciliation.discrepancies import Row

KINDS = {
    "bonus_lots_mismatch": "bonus bucket differs from its bonus lots' remaining",
    "bonus_expired_kept": "expired bonus not returned to promotions for over a day",
}


_LOTS = """
SELECT 'bonus_lots_mismatch', a.code, coalesce(l.remaining, 0), a.balance,
       a.balance_currency, jsonb_build_object('lots', coalesce(l.n, 0))
  FROM wallets_account a
  LEFT JOIN (SELECT player_id, sum(remaining) AS remaining, count(*) AS n FROM wallets_bonuslot
              GROUP BY player_id) AS l ON l.player_id = a.player_id
 WHERE a.kind = 'player' AND a.bucket = 'bonus' AND a.balance <> coalesce(l.remaining, 0)
"""

_KEPT = """
SELECT 'bonus_expired_kept', 'bonus lot ' || l.id, 0, l.remaining, 'INR',
       jsonb_build_object('player_id', l.player_id, 'expires_at', l.expires_at)
  FROM wallets_bonuslot l
 WHERE l.remaining > 0 AND l.expires_at < %(kept_before)s
"""


def bonus(cursor, ctx: dict) -> list[Row]:
    cursor.execute(_LOTS)
    found = cursor.fetchall()
    kept_before = timezone.now() - timedelta(days=1)
    cursor.execute(_KEPT, {"kept_before": kept_before})
    return found + cursor.fetchall()
