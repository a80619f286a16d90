"""Ledger checks. One parallel pass over `wallets_entry` feeds all of them.

The pass sums entries per (account, currency) into a small temporary table; each check is then
one `INSERT INTO wallets_discrepancy ... SELECT` (no Python loop per row).
"""

from __future__ import annotations

import secrets

SUMS_TABLE = "recon_entry_sums"

# One parallel pass: per (account, currency) the sum, the count and a random-weighted sum
# sum(amount * w(transfer)). If every transfer sums to zero per currency, the weighted sums of a
# currency add up to zero whatever the weights; if one does not, they add up to zero only by a
# 1-in-2^64 accident, and the weights are drawn afresh (the seed) on every run, so nobody can
# plant a tampering that cancels out. Only then is the exact per-transfer query run, to list
# the culprits: grouping 1M entries by transfer costs ~4x the account pass, proving they are
# fine costs nothing extra.
ENTRY_SUMS = f"""
DROP TABLE IF EXISTS {SUMS_TABLE};
CREATE TEMP TABLE {SUMS_TABLE} ON COMMIT DROP AS
SELECT account_id, amount_currency AS currency, sum(amount) AS total, count(*) AS n,
       sum(amount * hashint8extended(transfer_id, %(seed)s)) AS weighted
  FROM wallets_entry
 GROUP BY account_id, amount_currency;
"""

UNBALANCED_CURRENCIES = f"""
SELECT currency FROM {SUMS_TABLE} GROUP BY currency HAVING sum(weighted) <> 0
"""

_INSERT = (
    "INSERT INTO wallets_discrepancy "
    "(report_id, kind, subject, expected, actual, currency, details) "
)

# Every account check in one statement over one join of the accounts with their sums:
# - cached_balance: a player or escrow account's cached balance differs from its entries;
# - negative_balance: a player or escrow balance below zero (the CHECK constraint's backstop);
# - foreign_currency: entries in a currency other than their account's;
# - currency_total: the sum of every balance per currency is not zero (cached balances for
#   player and escrow accounts, the sum of entries for platform accounts, which cache nothing),
#   or the entries alone do not net to zero (a deleted platform entry shows up only here).
ACCOUNTS = f"""
WITH acc AS MATERIALIZED (
    SELECT a.id, a.code, a.kind, a.balance, a.balance_currency AS currency,
           coalesce(s.total, 0) AS total, coalesce(s.n, 0) AS n
      FROM wallets_account a
      LEFT JOIN {SUMS_TABLE} s ON s.account_id = a.id AND s.currency = a.balance_currency
), balances AS (
    SELECT currency, sum(CASE WHEN kind = 'platform' THEN total ELSE balance END) AS b
      FROM acc GROUP BY currency
), entries AS (
    SELECT currency, sum(total) AS e FROM {SUMS_TABLE} GROUP BY currency
), foreign_entries AS (
    SELECT s.* FROM {SUMS_TABLE} s
     WHERE NOT EXISTS (SELECT 1 FROM acc WHERE acc.id = s.account_id
                                           AND acc.currency = s.currency)
)
{_INSERT}
SELECT %(report)s, 'cached_balance', code, total, balance, currency,
       jsonb_build_object('account_id', id, 'entries', n)
  FROM acc WHERE kind <> 'platform' AND balance <> total
UNION ALL
SELECT %(report)s, 'negative_balance', code, 0, balance, currency,
       jsonb_build_object('account_id', id)
  FROM acc WHERE kind <> 'platform' AND balance < 0
UNION ALL
SELECT %(report)s, 'foreign_currency', coalesce(a.code, 'account ' || f.account_id), NULL,
       f.total, f.currency,
       jsonb_build_object('account_id', f.account_id, 'account_currency', a.balance_currency,
                          'entries', f.n)
  FROM foreign_entries f LEFT JOIN wallets_account a ON a.id = f.account_id
UNION ALL
SELECT %(report)s, 'currency_total', 'all ' || currency || ' balances', 0, coalesce(b, e),
       currency, jsonb_build_object('sum_of_balances', coalesce(b, 0)::text,
                                    'sum_of_entries', coalesce(e, 0)::text)
  FROM balances FULL JOIN entries USING (currency)
 WHERE coalesce(b, 0) <> 0 OR coalesce(e, 0) <> 0
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

STATS = f"SELECT coalesce(sum(n), 0), count(DISTINCT account_id) FROM {SUMS_TABLE}"


def entry_sums(cursor, ctx: dict) -> int:
    seed = secrets.randbits(63)
    cursor.execute(ENTRY_SUMS, {"seed": seed})
    cursor.execute(STATS)
    ctx["stats"]["entries"], ctx["stats"]["accounts_with_entries"] = (
        int(v) for v in cursor.fetchone()
    )
    ctx["stats"]["transfer_checksum_seed"] = seed
    return 0


def _insert(sql: str):
    def check(cursor, ctx: dict) -> int:
        cursor.execute(sql, {"report": ctx["report_id"]})
        return cursor.rowcount

    return check


def unbalanced_transfer(cursor, ctx: dict) -> int:
    """Exact per-transfer sums, only for a currency whose weighted checksum is not zero."""
    cursor.execute(UNBALANCED_CURRENCIES)
    currencies = [row[0] for row in cursor.fetchall()]
    ctx["stats"]["transfer_checksum_failed_for"] = currencies
    if not currencies:
        return 0
    cursor.execute(UNBALANCED_TRANSFER, {"report": ctx["report_id"], "currencies": currencies})
    return cursor.rowcount


accounts = _insert(ACCOUNTS)
