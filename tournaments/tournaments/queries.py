"""The tournaments' reads: their money per day or month, summed by PostgreSQL from the ledger in
one statement (the tournament P&L, `tournaments/tournaments/admin/pnl.py`); and what passed from
player to player through them (the one-way-flow report's finder of cash tournaments)."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import connection

from rummy_ledger.db import read_connection
from tournaments.models import Registration, Tournament
from tournaments.references import TOURNAMENT_REBUY, tournament_reference
from wallets import references
from wallets.models import CASH, Account, Entry, Transfer
from wallets.services.flows import PairFlow, pair_flows_sql

# The tournaments' money per day or month (platform time zone) and currency, from the ledger:
# what went into their escrows (entries, rebuys), what came back out (refunds), and each prize
# payout's fee, overlay (from promotions or chips issuance) and prizes. Every tournament transfer
# carries the reference `tournament:<pk>`; its key's third part says an entry from a rebuy.
# Tickets: an entry paid with one counts as an entry (what went into the registration's escrow),
# its return on unregistering as a refund; a satellite's seat (paid into the target's tickets
# account, `tk`) as a prize; a lapsed ticket back to promotions counts back against the overlay;
# what leaves a tickets account otherwise is not the target's refund.
TOURNAMENT_PNL_SQL = f"""
SELECT date_trunc(%(unit)s, t.created_at AT TIME ZONE %(tz)s)::date AS period,
       e.amount_currency,
       count(DISTINCT t.reference) AS tournaments,
       COALESCE(sum(e.amount) FILTER (WHERE t.kind = %(entry)s AND a.kind = %(escrow)s
                AND tk.id IS NULL
                AND split_part(t.idempotency_key, %(sep)s, 3) <> %(rebuy)s), 0) AS entries,
       COALESCE(sum(e.amount) FILTER (WHERE t.kind = %(entry)s AND a.kind = %(escrow)s
                AND tk.id IS NULL
                AND split_part(t.idempotency_key, %(sep)s, 3) = %(rebuy)s), 0) AS rebuys,
       COALESCE(sum(e.amount) FILTER (WHERE t.kind = %(settlement)s
                AND e.account_id = %(fee_account)s), 0) AS fee,
       COALESCE(-sum(e.amount) FILTER (WHERE t.kind = %(settlement)s
                AND e.account_id = ANY(%(overlay_accounts)s)), 0) AS overlay,
       COALESCE(sum(e.amount) FILTER (WHERE t.kind = %(settlement)s
                AND (a.kind = %(player)s OR (tk.id IS NOT NULL AND e.amount > 0))), 0) AS prizes,
       COALESCE(-sum(e.amount) FILTER (WHERE t.kind = %(refund)s AND a.kind = %(escrow)s
                AND tk.id IS NULL), 0) AS refunds
  FROM {Transfer._meta.db_table} t
  JOIN {Entry._meta.db_table} e ON e.transfer_id = t.id
  JOIN {Account._meta.db_table} a ON a.id = e.account_id
  LEFT JOIN {Tournament._meta.db_table} tk ON tk.tickets_account_id = a.id
 WHERE t.reference LIKE %(prefix)s AND t.created_at >= %(start)s AND t.created_at < %(end)s
 GROUP BY 1, 2
 ORDER BY 1, 2
"""
PNL_COLUMNS = ("entries", "rebuys", "fee", "overlay", "prizes", "refunds")


def tournament_pnl_rows(
    *,
    by: str,
    fee_account_id: int,
    overlay_account_ids: list[int],
    start: datetime,
    end: datetime,
) -> list[dict]:
    """The tournaments' money in [start, end) per `by` ("day" or "month") and currency: one row
    each with `period`, `currency`, `tournaments` and the `PNL_COLUMNS` (Decimal)."""
    params = {
        "unit": by,
        "tz": settings.TIME_ZONE,
        "sep": references.SEP,
        "rebuy": TOURNAMENT_REBUY,
        "prefix": tournament_reference("") + "%",
        "entry": Transfer.Kind.ENTRY,
        "settlement": Transfer.Kind.SETTLEMENT,
        "refund": Transfer.Kind.REFUND,
        "escrow": Account.Kind.ESCROW,
        "player": Account.Kind.PLAYER,
        "fee_account": fee_account_id,
        "overlay_accounts": overlay_account_ids,
        "start": start,
        "end": end,
    }
    with read_connection().cursor() as cursor:  # a finance page's: the standby's
        cursor.execute(TOURNAMENT_PNL_SQL, params)
        return [
            {
                "period": period,
                "currency": currency,
                "tournaments": n,
                **dict(zip(PNL_COLUMNS, sums, strict=True)),
            }
            for period, currency, n, *sums in cursor.fetchall()
        ]


# What each entrant of a finished cash tournament lost (entry and rebuys - refund - prize), one
# row per entrant as `pair_flows_sql` takes it.
_ENTRANTS_LOST = f"""
    SELECT r.tournament_id AS game_id, r.player_id, COALESCE(r.prize, 0) AS payout,
           t.finished_at, r.entry + r.rebuy_total - r.refund - COALESCE(r.prize, 0) AS lost
    FROM {Registration._meta.db_table} r
    JOIN {Tournament._meta.db_table} t ON t.id = r.tournament_id
    WHERE t.status = %(finished)s AND t.currency = %(cash)s AND t.finished_at >= %(since)s"""


def tournament_pair_flows(since: datetime) -> list[PairFlow]:
    """Per (loser, winner) pair of cash tournaments finished since `since`: what went across."""
    params = {"finished": Tournament.Status.FINISHED, "cash": CASH, "since": since}
    with connection.cursor() as cursor:
        cursor.execute(pair_flows_sql(_ENTRANTS_LOST), params)
        return [PairFlow(*row) for row in cursor.fetchall()]
