"""Ledger checks: one parallel pass over `wallets_entry`, then small set-based statements.

The pass (one statement) sums the entries per (account, currency), joins that to the accounts
and derives every account-level discrepancy plus per-currency totals into a small temporary
table; the discrepancies are then copied into the report with one `INSERT ... SELECT`.
No Python loop per row anywhere.

Every transfer sums to zero per currency: proven without grouping the entries by transfer (which
costs about four times the account pass on a million entries). The same pass adds a seeded,
random weighting per transfer: sum(paise * w(transfer)), w an odd 20-bit weight drawn from a
fresh seed on every run (stored in the report). When every transfer sums to zero per currency,
the weighted total of each currency is exactly zero whatever the weights; a single transfer that
does not makes it non-zero for sure (w is odd, never zero), and several only cancel out by a
roughly one-in-half-a-million accident of the weights, which nobody can aim for without the seed
and which the next night's fresh seed undoes. Only when a currency's weighted total is not zero
does the exact per-transfer query run, to list the culprits. Integer arithmetic keeps the pass
cheap: a single entry above 10^11 (in rupees or chips) would overflow it and fail the run loudly,
never pass it silently.
"""

from __future__ import annotations

import secrets

LEDGER_TABLE = "recon_ledger"

ONE_PASS = f"""
DROP TABLE IF EXISTS {LEDGER_TABLE};
CREATE TEMP TABLE {LEDGER_TABLE} ON COMMIT DROP AS
WITH sums AS MATERIALIZED (
    -- sums in paise (integer aggregates combine far faster across parallel workers)
    SELECT account_id, amount_currency AS currency, sum((amount * 100)::bigint) AS total,
           count(*) AS n,
           sum((amount * 100)::bigint * ((hashint8extended(transfer_id, %(seed)s) >> 44) | 1))
               AS weighted,
           sum((amount * 100)::bigint) FILTER (WHERE amount > 0) AS inflow
      FROM wallets_entry
     GROUP BY account_id, amount_currency
), acc AS MATERIALIZED (
    -- one row per account (with its entries in its own currency), plus one row per
    -- (account, currency) of entries in a currency that is not their account's (id IS NULL)
    SELECT a.id, a.code, a.kind, a.balance, s.account_id,
           coalesce(a.balance_currency, s.currency) AS currency,
           coalesce(s.total / 100, 0)::numeric(20, 2) AS total, coalesce(s.n, 0) AS n,
           coalesce(s.weighted, 0) AS weighted,
           coalesce(s.inflow / 100, 0)::numeric(20, 2) AS inflow
      FROM wallets_account a
      FULL JOIN sums s ON s.account_id = a.id AND s.currency = a.balance_currency
), per_currency AS (
    -- all balances of a currency: cached ones for player and escrow accounts, the sum of
    -- entries for platform accounts (they cache nothing)
    SELECT currency,
           sum(CASE WHEN id IS NULL THEN 0 WHEN kind = 'platform' THEN total ELSE balance END)
               AS balances,
           sum(total) AS entries_total, sum(weighted) AS weighted, sum(n) AS entries,
           count(account_id) AS accounts
      FROM acc GROUP BY currency
)
SELECT 'cached_balance' AS kind, code AS subject, total AS expected, balance AS actual,
       currency, jsonb_build_object('account_id', id, 'entries', n) AS details,
       NULL::bigint AS account_id
  FROM acc WHERE id IS NOT NULL AND kind <> 'platform' AND balance <> total
UNION ALL
SELECT 'negative_balance', code, 0, balance, currency, jsonb_build_object('account_id', id),
       NULL
  FROM acc WHERE id IS NOT NULL AND kind <> 'platform' AND balance < 0
UNION ALL
SELECT 'foreign_currency', 'account ' || account_id, NULL, total, currency,
       jsonb_build_object('account_id', account_id, 'entries', n), account_id
  FROM acc WHERE id IS NULL
UNION ALL
-- the entries alone must net to zero too (a deleted platform entry shows up only here)
SELECT 'currency_total', 'all ' || currency || ' balances', 0,
       CASE WHEN balances <> 0 THEN balances ELSE entries_total END, currency,
       jsonb_build_object('sum_of_balances', balances::text, 'sum_of_entries',
                          entries_total::text), NULL
  FROM per_currency WHERE balances <> 0 OR entries_total <> 0
UNION ALL
SELECT '_per_currency', currency, 0, weighted, currency,
       jsonb_build_object('entries', entries, 'accounts', accounts), NULL
  FROM per_currency
UNION ALL
-- what every escrow received and paid out, for the game checks (games.py)
SELECT '_escrow', code, inflow, inflow - total, currency, '{{}}'::jsonb, id
  FROM acc WHERE kind = 'escrow'
"""

_INSERT = (
    "INSERT INTO wallets_discrepancy "
    "(report_id, kind, subject, expected, actual, currency, details) "
)

ACCOUNTS = (
    _INSERT
    + f"""
SELECT %(report)s, r.kind, coalesce(a.code, r.subject), r.expected, r.actual, r.currency,
       r.details || CASE WHEN r.kind = 'foreign_currency'
                         THEN jsonb_build_object('account_currency', a.balance_currency)
                         ELSE '{{}}'::jsonb END
  FROM {LEDGER_TABLE} r
  LEFT JOIN wallets_account a ON a.id = r.account_id
 WHERE r.kind NOT LIKE '\\_%%'
"""
)

PER_CURRENCY = f"""
SELECT currency, actual <> 0, (details ->> 'entries')::bigint, (details ->> 'accounts')::bigint
  FROM {LEDGER_TABLE} WHERE kind = '_per_currency'
"""

UNBALANCED_TRANSFER = (
    _INSERT
    + """
SELECT %(report)s, 'unbalanced_transfer', 'transfer ' || s.transfer_id, 0, s.total, s.currency,
       jsonb_build_object('transfer_id', s.transfer_id, 'kind', t.kind,
                          'reference', t.reference, 'entries', s.n)
  FROM (SELECT transfer_id, amount_currency AS currency, sum(amount) AS total, count(*) AS n
          FROM wallets_entry
         WHERE amount_currency = ANY(%(currencies)s)
         GROUP BY transfer_id, amount_currency
        HAVING sum(amount) <> 0) AS s
  LEFT JOIN wallets_transfer t ON t.id = s.transfer_id
"""
)


def entry_pass(cursor, ctx: dict) -> int:
    """The one pass over the entries; stores its findings in the report."""
    seed = secrets.randbits(63)
    cursor.execute(ONE_PASS, {"seed": seed})
    cursor.execute(PER_CURRENCY)
    rows = cursor.fetchall()
    stats = ctx["stats"]
    stats["transfer_checksum_seed"] = seed
    stats["entries"] = sum(row[2] for row in rows)
    stats["accounts_with_entries"] = sum(row[3] for row in rows)
    ctx["checksum_failed"] = [row[0] for row in rows if row[1]]
    stats["transfer_checksum_failed_for"] = ctx["checksum_failed"]
    cursor.execute(ACCOUNTS, {"report": ctx["report_id"]})
    return cursor.rowcount


def unbalanced_transfer(cursor, ctx: dict) -> int:
    """Exact per-transfer sums, only for a currency whose weighted checksum is not zero."""
    currencies = ctx.get("checksum_failed") or []
    if not currencies:
        return 0
    cursor.execute(UNBALANCED_TRANSFER, {"report": ctx["report_id"], "currencies": currencies})
    return cursor.rowcount
