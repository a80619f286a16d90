"""Promotions spend: what left promotions, per IST day and currency, by what it paid for, summed
by PostgreSQL from the ledger's entries on the promotions accounts (promotions; in chips, chips
issuance, where promotions' chips come from), so it always agrees with the books.

Money counts once, when it leaves promotions; what comes back counts back, on the day it comes
back. Each entry on a promotions account is one of:

- `leaderboard`: a leaderboard's prizes (transfers referenced `leaderboard:...`);
- `tickets_issued`: tickets issued by finance, from promotions into a tournament's tickets
  account; `tickets_back`: a ticket's value back from a tickets account (refunded, lapsed or
  expired unused: negative spend);
- `overlay`: a tournament's finish making up its guarantee (a settlement of `tournament:...`);
- `bonuses`: bonus granted (sign-up, GST cashback, finance's grants); `bonuses_expired`: bonus
  lots expired back (negative spend);
- `other`: anything else moving promotions (an adjustment, a reversal, a chips grant...), so
  that `total` is exactly what promotions' balance went down by.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings

from rummy_ledger.db import read_connection
from tournaments.models import Tournament
from tournaments.references import tournament_reference
from wallets.models import Entry, Transfer

LEADERBOARD_PREFIX = "leaderboard:"
KINDS = (
    "overlay",
    "tickets_issued",
    "tickets_back",
    "leaderboard",
    "bonuses",
    "bonuses_expired",
    "other",
)
COLUMNS = (*KINDS, "total")

_SUMS = ", ".join(f"COALESCE(sum(amount) FILTER (WHERE kind = '{k}'), 0)" for k in KINDS)
# One pass over the promotions accounts' entries of the period (their index: account, time);
# the counter-party a tickets account when the transfer's other leg is one (a transfer's
# entries are written at one moment: the same partition).
SPEND_SQL = f"""
WITH spent AS (
    SELECT (e.created_at AT TIME ZONE %(tz)s)::date AS day, e.amount_currency AS currency,
           -e.amount AS amount,
           CASE
             WHEN t.reference LIKE %(leaderboard)s THEN 'leaderboard'
             WHEN EXISTS (SELECT 1 FROM {Entry._meta.db_table} o
                            JOIN {Tournament._meta.db_table} tk
                              ON tk.tickets_account_id = o.account_id
                           WHERE o.transfer_id = e.transfer_id
                             AND o.created_at = e.created_at)
               THEN CASE WHEN e.amount < 0 THEN 'tickets_issued' ELSE 'tickets_back' END
             WHEN t.kind = %(settlement)s AND t.reference LIKE %(tournament)s THEN 'overlay'
             WHEN t.kind = %(bonus)s THEN 'bonuses'
             WHEN t.kind = %(bonus_expiry)s THEN 'bonuses_expired'
             ELSE 'other'
           END AS kind
      FROM {Entry._meta.db_table} e
      JOIN {Transfer._meta.db_table} t ON t.id = e.transfer_id
     WHERE e.account_id = ANY(%(accounts)s)
       AND e.created_at >= %(start)s AND e.created_at < %(end)s
)
SELECT day, currency, {_SUMS}, sum(amount)
  FROM spent
 GROUP BY day, currency
 ORDER BY day, currency
"""


def promotions_spend_rows(
    *, promotions_account_ids: list[int], start: datetime, end: datetime
) -> list[dict]:
    """Promotions spend in [start, end), one row per IST day and currency: `day`, `currency`
    and the COLUMNS (Decimal; `total` is what left the accounts less what came back)."""
    params = {
        "tz": settings.TIME_ZONE,
        "leaderboard": LEADERBOARD_PREFIX + "%",
        "tournament": tournament_reference("") + "%",
        "settlement": Transfer.Kind.SETTLEMENT,
        "bonus": Transfer.Kind.BONUS,
        "bonus_expiry": Transfer.Kind.BONUS_EXPIRY,
        "accounts": promotions_account_ids,
        "start": start,
        "end": end,
    }
    with read_connection().cursor() as cursor:  # a finance page's: the standby's
        cursor.execute(SPEND_SQL, params)
        return [
            {"day": day, "currency": currency, **dict(zip(COLUMNS, sums, strict=True))}
            for day, currency, *sums in cursor.fetchall()
        ]
