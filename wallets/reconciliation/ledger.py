"""Ledger checks. One pass over `wallets_entry` (hash grouping sets) feeds all of them.

The pass sums entries per (account, currency) and per (transfer, currency) in one scan and keeps
every account row but only the transfer rows that do not sum to zero, so what is left is small.
Each check is then one `INSERT INTO wallets_discrepancy ... SELECT` (no Python loop per row).
"""

from __future__ import annotations

SUMS_TABLE = "recon_entry_sums"

ENTRY_SUMS = f"""
DROP TABLE IF EXISTS {SUMS_TABLE};
CREATE TEMP TABLE {SUMS_TABLE} ON COMMIT DROP AS
SELECT GROUPING(transfer_id) = 1 AS per_account,
       account_id, transfer_id, amount_currency AS currency,
       sum(amount) AS total, count(*) AS n
  FROM wallets_entry
 GROUP BY GROUPING SETS ((account_id, amount_currency), (transfer_id, amount_currency))
HAVING GROUPING(transfer_id) = 1 OR sum(amount) <> 0;
ANALYZE {SUMS_TABLE};
"""

_INSERT = (
    "INSERT INTO wallets_discrepancy "
    "(report_id, kind, subject, expected, actual, currency, details) "
)

CACHED_BALANCE = (
    _INSERT
    + f"""
SELECT %(report)s, 'cached_balance', a.code, coalesce(s.total, 0), a.balance,
       a.balance_currency, jsonb_build_object('account_id', a.id, 'entries', coalesce(s.n, 0))
  FROM wallets_account a
  LEFT JOIN {SUMS_TABLE} s
    ON s.per_account AND s.account_id = a.id AND s.currency = a.balance_currency
 WHERE a.kind <> 'platform' AND a.balance <> coalesce(s.total, 0)
"""
)

FOREIGN_CURRENCY = (
    _INSERT
    + f"""
SELECT %(report)s, 'foreign_currency', a.code, NULL, s.total, s.currency,
       jsonb_build_object('account_id', a.id, 'account_currency', a.balance_currency,
                          'entries', s.n)
  FROM {SUMS_TABLE} s JOIN wallets_account a ON a.id = s.account_id
 WHERE s.per_account AND s.currency <> a.balance_currency
"""
)

UNBALANCED_TRANSFER = (
    _INSERT
    + f"""
SELECT %(report)s, 'unbalanced_transfer', 'transfer ' || s.transfer_id, 0, s.total, s.currency,
       jsonb_build_object('transfer_id', s.transfer_id, 'kind', t.kind,
                          'reference', t.reference, 'entries', s.n)
  FROM {SUMS_TABLE} s LEFT JOIN wallets_transfer t ON t.id = s.transfer_id
 WHERE NOT s.per_account
"""
)

# The sum of every balance per currency is zero: cached balances for player and escrow accounts,
# the sum of entries for platform accounts (they cache nothing). The entries alone must also net
# to zero per currency (a deleted entry of a platform account shows up only here).
CURRENCY_TOTAL = (
    _INSERT
    + f"""
WITH balances AS (
    SELECT a.balance_currency AS currency,
           sum(CASE WHEN a.kind = 'platform' THEN coalesce(s.total, 0) ELSE a.balance END) AS b
      FROM wallets_account a
      LEFT JOIN {SUMS_TABLE} s
        ON s.per_account AND s.account_id = a.id AND s.currency = a.balance_currency
     GROUP BY a.balance_currency
), entries AS (
    SELECT currency, sum(total) AS e FROM {SUMS_TABLE} WHERE per_account GROUP BY currency
)
SELECT %(report)s, 'currency_total', 'all ' || currency || ' balances', 0,
       coalesce(b, e), currency,
       jsonb_build_object('sum_of_balances', coalesce(b, 0)::text,
                          'sum_of_entries', coalesce(e, 0)::text)
  FROM balances FULL JOIN entries USING (currency)
 WHERE coalesce(b, 0) <> 0 OR coalesce(e, 0) <> 0
"""
)

NEGATIVE_BALANCE = (
    _INSERT
    + """
SELECT %(report)s, 'negative_balance', a.code, 0, a.balance, a.balance_currency,
       jsonb_build_object('account_id', a.id)
  FROM wallets_account a
 WHERE a.kind <> 'platform' AND a.balance < 0
"""
)

STATS = f"""
SELECT coalesce(sum(n) FILTER (WHERE per_account), 0),
       count(*) FILTER (WHERE per_account)
  FROM {SUMS_TABLE}
"""


def entry_sums(cursor, ctx: dict) -> int:
    cursor.execute(ENTRY_SUMS)
    cursor.execute(STATS)
    ctx["stats"]["entries"], ctx["stats"]["accounts_with_entries"] = (
        int(v) for v in cursor.fetchone()
    )
    return 0


def _insert(sql: str):
    def check(cursor, ctx: dict) -> int:
        cursor.execute(sql, {"report": ctx["report_id"]})
        return cursor.rowcount

    return check


cached_balance = _insert(CACHED_BALANCE)
foreign_currency = _insert(FOREIGN_CURRENCY)
unbalanced_transfer = _insert(UNBALANCED_TRANSFER)
currency_total = _insert(CURRENCY_TOTAL)
negative_balance = _insert(NEGATIVE_BALANCE)
