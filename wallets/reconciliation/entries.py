"""Ledger checks: one parallel pass over `wallets_entry`, then small set-based statements.

The pass reads the entries since the last month close only (`wallets.services.months`), added to
the balances that close proved, and checks the cached balances of the accounts with entries
since then: the close proved the rest, so the nightly cost grows with the days since the close,
not with history. Before the first close it reads every entry and every account.

The pass (one statement) sums the entries per (account, currency), joins that to the accounts
and returns every account-level discrepancy plus a few summary rows: per-currency totals, each
escrow's flows (for the games' checks) and each platform account's total (for the tax checks),
kept in `ctx` and handed to those checks as parameters. A standby refuses temporary tables, and
reconciliation may read one (`runner.py`).

Every transfer sums to zero per currency: proven without grouping the entries by transfer (which
costs about four times the account pass on a million entries). The same pass adds a seeded,
random weighting per transfer: sum((paise mod p) * w(transfer)), w an odd 20-bit weight drawn from
a fresh seed on every run and p a fresh random 43-bit prime (both stored in the report). When
every transfer sums to zero per currency, each transfer's weighted residues sum to a multiple of
p, and so does the currency's total: the check is `total mod p == 0`, whatever the weights. A
single transfer that does not balance already shows in the currency's plain total; transfers
that do not balance but cancel each other out in the total make the weighted total a
non-multiple of p, except by a roughly one-in-half-a-million accident of the weights (or if they
are off by an exact multiple of p), which nobody can aim for without the seed and the prime, and
which the next night's fresh ones undo. Only when a currency's check fails does the exact
per-transfer query run, to list the culprits.

Integer arithmetic keeps the pass cheap and is safe for any amount the columns hold
(numeric(18,2): at most 10^18 paise, a bigint): a residue is below 2^43 and a weight below 2^20,
so no product leaves bigint, and PostgreSQL sums bigints without overflow. (The weight times the
whole amount overflowed above 10^11 rupees and failed the run for good.)
"""

from __future__ import annotations

import json
import secrets

from wallets.models import MonthCloseBalance
from wallets.months import Month
from wallets.reconciliation.discrepancies import Row
from wallets.services.months import last_close

MODULUS_BITS = 43  # residue < 2^43, weight < 2^20: every product fits a bigint
ENTRY_PASS_KINDS = {
    "cached_balance": "cached balance differs from its entries",
    "foreign_currency": "entry in a currency other than its account's",
    "currency_total": "balances of a currency do not sum to zero",
    "negative_balance": "player or escrow balance below zero",
}

ONE_PASS = """
WITH moved AS MATERIALIZED (
    -- the entries since the last close (all of them before the first), in paise (integer
    -- aggregates combine far faster across parallel workers)
    SELECT account_id, amount_currency AS currency, sum((amount * 100)::bigint) AS moved,
           count(*) AS n,
           sum(((amount * 100)::bigint %% %(modulus)s)
               * ((hashint8extended(transfer_id, %(seed)s) >> 44) | 1)) AS weighted,
           coalesce(sum((amount * 100)::bigint) FILTER (WHERE amount > 0), 0) AS inflow
      FROM wallets_entry
     WHERE created_at >= coalesce(%(since)s, '-infinity'::timestamptz)
     GROUP BY account_id, amount_currency
), sums AS MATERIALIZED (
    -- added to the close's balance of each account that moved (the close proved the others),
    -- read by key (ACCOUNTS_MOVED says why); numeric paise, as sum() of bigints is: no
    -- division below truncates
    SELECT m.account_id, m.currency, coalesce(c.balance * 100, 0) AS opening,
           coalesce(c.balance * 100, 0) + m.moved AS total, m.n, m.weighted,
           coalesce(c.inflow * 100, 0) + m.inflow AS inflow
      FROM moved m
      LEFT JOIN (SELECT * FROM {closes}
                  WHERE close_id = %(close)s
                    AND account_id = ANY(ARRAY(SELECT account_id FROM moved))) c
        ON c.account_id = m.account_id AND c.currency = m.currency
), acc AS MATERIALIZED (
    -- one row per account (with its entries in its own currency), plus one row per
    -- (account, currency) of entries in a currency that is not their account's (id IS NULL);
    -- after a close, only the accounts with entries since it (an account whose only entries
    -- since are in another currency still has its own row: its closing balance, from o)
    SELECT a.id, a.code, a.kind, a.balance, s.account_id,
           coalesce(a.balance_currency, s.currency) AS currency,
           coalesce(s.total / 100, o.balance, 0)::numeric(20, 2) AS total,
           coalesce(s.opening / 100, o.balance, 0)::numeric(20, 2) AS opening,
           coalesce(s.n, 0) AS n, coalesce(s.weighted, 0) AS weighted,
           coalesce(s.inflow / 100, o.inflow, 0)::numeric(20, 2) AS inflow
      FROM {accounts} a
      FULL JOIN sums s ON s.account_id = a.id AND s.currency = a.balance_currency
      LEFT JOIN LATERAL (
          SELECT c.balance, c.inflow FROM {closes} c
           WHERE s.account_id IS NULL AND c.close_id = %(close)s AND c.account_id = a.id
             AND c.currency = a.balance_currency
          OFFSET 0) o ON true
), per_currency AS (
    -- all balances of a currency, less what the last close proved them to be: cached ones for
    -- player and escrow accounts, the sum of entries for platform accounts (they cache nothing)
    SELECT currency,
           sum(CASE WHEN id IS NULL THEN 0 WHEN kind = 'platform' THEN total - opening
                    ELSE balance - opening END) AS balances,
           sum(total - opening) AS entries_total, sum(weighted) AS weighted, sum(n) AS entries,
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
SELECT 'foreign_currency', coalesce(f.code, 'account ' || acc.account_id), NULL, total, currency,
       jsonb_build_object('account_id', acc.account_id, 'entries', n,
                          'account_currency', f.balance_currency), acc.account_id
  FROM acc LEFT JOIN wallets_account f ON f.id = acc.account_id WHERE acc.id IS NULL
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
-- what every escrow received and paid out, for the game checks (tournaments/reconciliation.py):
-- one row of three aligned arrays (as text: handed back to them as parameters as they are)
SELECT '_escrows', NULL, NULL, NULL, NULL,
       jsonb_build_object(
           'ids', coalesce(array_agg(id ORDER BY id), '{}')::text,
           'in', coalesce(array_agg(inflow ORDER BY id), '{}')::text,
           'out', coalesce(array_agg(inflow - total ORDER BY id), '{}')::text), NULL
  FROM acc WHERE kind = 'escrow'
UNION ALL
-- what every platform account holds in its currency (the sum of its entries), for the tax
-- checks (payments.py): GST and TDS payable are summed here, not read again
SELECT '_platform', code, NULL, total, currency, '{}'::jsonb, id
  FROM acc WHERE kind = 'platform'
"""


UNBALANCED_TRANSFER = """
SELECT 'unbalanced_transfer', 'transfer ' || s.transfer_id, 0, s.total, s.currency,
       jsonb_build_object('transfer_id', s.transfer_id, 'kind', t.kind,
                          'reference', t.reference, 'entries', s.n)
  FROM (SELECT transfer_id, amount_currency AS currency, sum(amount) AS total, count(*) AS n
          FROM wallets_entry
         WHERE amount_currency = ANY(%(currencies)s)
         GROUP BY transfer_id, amount_currency
        HAVING sum(amount) <> 0) AS s
  LEFT JOIN wallets_transfer t ON t.id = s.transfer_id
"""


# Before the first close every account is checked (one with no entry must cache zero); after
# one, the accounts with entries since it, their balances from the close's. Those accounts and
# their closing balances are read by key, the moved accounts' ids handed to the index as one
# array (`= ANY(ARRAY(...))`), never by hashing the whole table: the accounts ever opened and the
# balances a close stores grow with history (every game's escrow), the accounts that moved since
# the close with the days since it. (Hashing all 269,000 accounts and a close's 230,000 balances
# for 43,000 that moved cost 0.1-0.2 s of a 0.45 s pass; by key, 0.02 s: bench/reconcile.py.)
EVERY_ACCOUNT = "wallets_account"
ACCOUNTS_MOVED = (
    "(SELECT * FROM wallets_account WHERE id = ANY(ARRAY(SELECT account_id FROM sums)))"
)


def entry_pass(cursor, ctx: dict) -> list[Row]:
    """The one pass over the entries since the last close: its discrepancies; its summary rows
    kept in `ctx` (`escrow_flows`, `platform_totals`, `checksum_failed`) for later checks."""
    seed, modulus = secrets.randbits(63), random_prime(MODULUS_BITS)
    close = last_close()
    since = Month.parse(close.month).end if close else None
    ctx["since"], ctx["close"] = since, close.pk if close else None
    sql = ONE_PASS.replace("{closes}", MonthCloseBalance._meta.db_table).replace(
        "{accounts}", ACCOUNTS_MOVED if close else EVERY_ACCOUNT
    )
    cursor.execute(
        sql,
        {"seed": seed, "modulus": modulus, "since": since, "close": close.pk if close else None},
    )
    found, per_currency, escrows, platform = [], [], ("{}", "{}", "{}"), {}
    for kind, subject, expected, actual, currency, details, account_id in cursor.fetchall():
        if kind == "_per_currency":
            per_currency.append((currency, actual, details))
        elif kind == "_escrows":
            flows = _loaded(details)
            escrows = (flows["ids"], flows["in"], flows["out"])
        elif kind == "_platform":
            platform[account_id] = platform.get(account_id, 0) + actual
        else:
            found.append((kind, subject, expected, actual, currency, details))
    ctx["escrow_flows"], ctx["platform_totals"] = escrows, platform
    details = [_loaded(d) for _, _, d in per_currency]
    stats = ctx["stats"]
    stats["transfer_checksum_seed"] = seed
    stats["transfer_checksum_modulus"] = modulus
    stats["since_close"] = close.month if close else None
    stats["entries"] = sum(int(d["entries"]) for d in details)
    stats["accounts_with_entries"] = sum(int(d["accounts"]) for d in details)
    ctx["checksum_failed"] = [c for c, weighted, _ in per_currency if weighted % modulus]
    stats["transfer_checksum_failed_for"] = ctx["checksum_failed"]
    return found


def _loaded(details) -> dict:
    return json.loads(details) if isinstance(details, str) else details


def random_prime(bits: int) -> int:
    """A random prime of exactly `bits` bits (Miller-Rabin with the bases that are exact below
    3.3 * 10^24)."""
    while True:
        candidate = secrets.randbits(bits - 1) | (1 << (bits - 1)) | 1
        if _is_prime(candidate):
            return candidate


def _is_prime(n: int) -> bool:
    bases = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)
    if n < 2 or any(n % b == 0 for b in bases):
        return n in bases
    d, r = n - 1, 0
    while d % 2 == 0:
        d, r = d // 2, r + 1
    for a in bases:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = pow(x, 2, n)
            if x == n - 1:
                break
        else:
            return False
    return True


def unbalanced_transfer(cursor, ctx: dict) -> list[Row]:
    """Exact per-transfer sums, only for a currency whose weighted checksum is not zero."""
    currencies = ctx.get("checksum_failed") or []
    if not currencies:
        return []
    cursor.execute(UNBALANCED_TRANSFER, {"currencies": currencies})
    return cursor.fetchall()
