"""Money in and out against the tax accounts and the withdrawals (set-based, like the others).

GST and TDS payable's totals come from the ledger's one pass over the entries
(`ctx["platform_totals"]`), not from a second sum over their entries: their balance at the last
month close plus what moved since. GST is checked by period: the deposits since the last close one
by one, and GST payable as its closing balance plus their GST, less the GST of earlier deposits
reversed since. TDS payable is checked whole against the withdrawals (a table of its own, not
the entries).

- GST: every deposit from the first one that carried GST on has its own record of the rate it
  was taxed at, and exactly rate/(100 + rate) of its amount in GST payable, as recorded
  (`wallets.tax.formulas`'s rule; PostgreSQL's `round(numeric, 2)` rounds half away from zero,
  which is half up for these positive amounts: a test holds the two to one another); GST payable
  holds exactly the sum of those deposits' recorded GST, less that of reversed ones (the totals per
  rate are in the discrepancy's details).
- TDS: TDS payable holds exactly the TDS of the withdrawals that are approved or paid plus what
  the year ends withheld (a failed withdrawal's TDS went back with its reversal; a rejected one
  never reached it), and each of those withdrawals' approval put its own TDS there.
- Pending: every player's pending bucket holds exactly their withdrawals still `requested`.
- Stuck: no withdrawal stays requested or approved longer than
  `RECONCILE_STUCK_WITHDRAWAL_HOURS`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.utils import timezone

from wallets import references
from wallets.models import CASH, MonthCloseBalance, PlatformAccount
from wallets.reconciliation.discrepancies import Row

GST_KINDS = {
    "gst_deposit_mismatch": "deposit whose GST is not its own rate's share of it",
    "gst_payable_mismatch": "GST payable differs from the GST of the deposits",
}
TDS_KINDS = {
    "tds_withdrawal_mismatch": "withdrawal whose approval did not withhold its TDS",
    "tds_payable_mismatch": "TDS payable differs from the TDS of withdrawals and year ends",
}
WITHDRAWAL_KINDS = {
    "pending_mismatch": "pending bucket differs from the withdrawals waiting",
    "withdrawal_stuck": "withdrawal requested or approved for too long",
}


# One row per deposit: its amount (out of gateway clearing), its GST (into GST payable), and the
# rate and GST its own record says it was taxed at (`wallets_depositgst`). The GST entries and the
# reversals (since the last close: a reversal comes after its deposit) are read once each and
# hashed, not looked up per deposit (0.6 s instead of 0.8 s for
# 150,000 deposits; a transfer is reversed at most once, so the join adds no row).
_DEPOSITS = """
SELECT t.id, t.reference, t.created_at, -e.amount AS amount,
       g.amount AS gst, r.rate_percent AS rate, r.amount AS recorded_amount,
       r.gst AS recorded_gst, x.reverses_id IS NOT NULL AS reversed
  FROM wallets_entry e
  -- a transfer is dated as its entries (one transaction's now()): naming its period lets the
  -- plan read the period's transfers by their date, not every transfer ever made
  JOIN wallets_transfer t ON t.id = e.transfer_id AND t.kind = 'deposit'
   AND t.created_at >= coalesce(%(since_close)s, '-infinity'::timestamptz)
  LEFT JOIN (SELECT transfer_id, amount FROM wallets_entry
              WHERE account_id = %(gst)s
                AND created_at >= coalesce(%(since_close)s, '-infinity'::timestamptz)) AS g
    ON g.transfer_id = t.id
  LEFT JOIN wallets_depositgst r ON r.transfer_id = t.id
  LEFT JOIN (SELECT reverses_id FROM wallets_transfer
              WHERE reverses_id IS NOT NULL
                AND created_at >= coalesce(%(since_close)s, '-infinity'::timestamptz)) AS x
    ON x.reverses_id = t.id
 WHERE e.account_id = %(clearing)s
   AND e.created_at >= coalesce(%(since_close)s, '-infinity'::timestamptz)
"""

# A deposit's GST is rate/(100 + rate) of it at its own rate, rounded like `wallets.tax.formulas`;
# one without a record of its rate, from the first one recorded with GST on, is a discrepancy too.
_GST = (
    "WITH recon_deposits AS MATERIALIZED ("
    + _DEPOSITS
    + """)
SELECT 'gst_deposit_mismatch', 'deposit ' || d.reference,
       round(d.amount * d.rate / (100 + d.rate), 2), coalesce(d.gst, 0), 'INR',
       jsonb_build_object('transfer_id', d.id, 'amount', d.amount::text,
                          'rate', d.rate::text, 'recorded_gst', d.recorded_gst::text)
  FROM recon_deposits d
 WHERE CASE WHEN d.rate IS NULL
            THEN d.gst IS NOT NULL OR d.created_at >= (SELECT min(created_at) FROM recon_deposits
                                                     WHERE rate IS NOT NULL)
            ELSE coalesce(d.gst, 0) <> round(d.amount * d.rate / (100 + d.rate), 2)
                 OR d.recorded_gst <> coalesce(d.gst, 0) OR d.recorded_amount <> d.amount
       END
UNION ALL
SELECT 'gst_payable_mismatch', %(gst_code)s, expected, actual, 'INR',
       jsonb_build_object('deposits', n, 'per_rate', per_rate)
  FROM (SELECT %(opening)s
                   + (SELECT coalesce(sum(recorded_gst), 0) FROM recon_deposits
                       WHERE NOT reversed)
                   - (SELECT coalesce(sum(r.gst), 0)
                        FROM wallets_transfer x
                        JOIN wallets_transfer d ON d.id = x.reverses_id
                        JOIN wallets_depositgst r ON r.transfer_id = d.id
                       WHERE x.created_at >= %(since)s AND d.created_at < %(since)s)
                   AS expected,
               %(actual)s::numeric AS actual,
               (SELECT count(*) FROM recon_deposits WHERE rate IS NOT NULL) AS n,
               (SELECT coalesce(jsonb_object_agg(rate::text, total::text), '{}')
                  FROM (SELECT rate, sum(recorded_gst) AS total FROM recon_deposits
                         WHERE rate IS NOT NULL AND NOT reversed GROUP BY rate) AS r) AS per_rate
       ) AS s
 WHERE expected <> actual
"""
)

_TDS = """
SELECT 'tds_withdrawal_mismatch', 'withdrawal ' || w.reference, w.tds,
       coalesce(e.amount, 0), 'INR',
       jsonb_build_object('withdrawal_id', w.id, 'status', w.status,
                          'transfer_id', w.approval_transfer_id)
  FROM wallets_withdrawal w
  LEFT JOIN wallets_entry e ON e.transfer_id = w.approval_transfer_id AND e.account_id = %(tds)s
 WHERE w.status IN ('approved', 'paid') AND coalesce(e.amount, 0) <> w.tds
UNION ALL
SELECT 'tds_payable_mismatch', %(tds_code)s, expected, actual, 'INR',
       jsonb_build_object('withdrawals', withdrawals::text, 'year_ends', year_ends::text)
  FROM (SELECT w.total + y.total AS expected, w.total AS withdrawals, y.total AS year_ends,
               %(actual)s::numeric AS actual
          FROM (SELECT coalesce(sum(tds), 0) AS total FROM wallets_withdrawal
                 WHERE status IN ('approved', 'paid')) AS w,
               (SELECT coalesce(sum(withheld), 0) AS total FROM wallets_tdsyearend) AS y) AS s
 WHERE expected <> actual
"""

_PENDING = """
SELECT 'pending_mismatch', a.code, coalesce(w.waiting, 0), a.balance,
       a.balance_currency, jsonb_build_object('withdrawals', coalesce(w.n, 0))
  FROM wallets_account a
  LEFT JOIN (SELECT player_id, sum(amount) AS waiting, count(*) AS n FROM wallets_withdrawal
              WHERE status = 'requested' GROUP BY player_id) AS w ON w.player_id = a.player_id
 WHERE a.kind = 'player' AND a.bucket = 'pending' AND a.balance <> coalesce(w.waiting, 0)
"""

_STUCK = """
SELECT 'withdrawal_stuck', 'withdrawal ' || w.reference, NULL, w.amount, 'INR',
       jsonb_build_object('withdrawal_id', w.id, 'status', w.status,
                          'since', coalesce(w.decided_at, w.requested_at))
  FROM wallets_withdrawal w
 WHERE w.status IN ('requested', 'approved')
   AND coalesce(w.decided_at, w.requested_at) < %(stuck_before)s
"""


def _accounts(cursor) -> dict[str, int | None]:
    codes = {
        code: references.platform_account_code(code)
        for code in (
            PlatformAccount.GATEWAY_CLEARING,
            PlatformAccount.GST_PAYABLE,
            PlatformAccount.TDS_PAYABLE,
        )
    }
    cursor.execute(
        "SELECT code, id FROM wallets_account WHERE code = ANY(%s)", [list(codes.values())]
    )
    found = dict(cursor.fetchall())
    return {name: found.get(code) for name, code in codes.items()}


def _opening(cursor, ctx: dict, account_id: int | None) -> Decimal:
    """A tax account's balance at the last close (zero before the first): one row, looked up by
    the close's whole unique key."""
    cursor.execute(
        f"SELECT balance FROM {MonthCloseBalance._meta.db_table} "
        "WHERE close_id = %s AND account_id = %s AND currency = %s",
        [ctx.get("close"), account_id, CASH],
    )
    row = cursor.fetchone()
    return row[0] if row else Decimal("0.00")


def _payable(ctx: dict, account_id: int | None, opening: Decimal) -> Decimal:
    """A tax account's balance now: the entry pass's total, or its closing one if it did not
    move since the last close."""
    return ctx["platform_totals"].get(account_id, opening)


def gst(cursor, ctx: dict) -> list[Row]:
    """The deposits since the last close, one by one; GST payable from its closing balance."""
    accounts = _accounts(cursor)
    since = ctx.get("since")
    opening = _opening(cursor, ctx, accounts[PlatformAccount.GST_PAYABLE])
    cursor.execute(
        _GST,
        {
            "clearing": accounts[PlatformAccount.GATEWAY_CLEARING],
            "since_close": since,
            "since": since or datetime.min.replace(tzinfo=UTC),
            "opening": opening,
            "actual": _payable(ctx, accounts[PlatformAccount.GST_PAYABLE], opening),
            "gst": accounts[PlatformAccount.GST_PAYABLE],
            "gst_code": references.platform_account_code(PlatformAccount.GST_PAYABLE),
        },
    )
    return cursor.fetchall()


def tds(cursor, ctx: dict) -> list[Row]:
    accounts = _accounts(cursor)
    opening = _opening(cursor, ctx, accounts[PlatformAccount.TDS_PAYABLE])
    cursor.execute(
        _TDS,
        {
            "actual": _payable(ctx, accounts[PlatformAccount.TDS_PAYABLE], opening),
            "tds": accounts[PlatformAccount.TDS_PAYABLE],
            "tds_code": references.platform_account_code(PlatformAccount.TDS_PAYABLE),
        },
    )
    return cursor.fetchall()


def withdrawals(cursor, ctx: dict) -> list[Row]:
    hours = settings.RECONCILE_STUCK_WITHDRAWAL_HOURS
    cursor.execute(_PENDING)
    found = cursor.fetchall()
    stuck_before = timezone.now() - timedelta(hours=hours)
    cursor.execute(_STUCK, {"stuck_before": stuck_before})
    return found + cursor.fetchall()
