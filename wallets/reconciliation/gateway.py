"""The payment gateway's statement against the deposits and withdrawals the ledger recorded.

A statement is a CSV with the columns `reference, amount, date, type` (type: deposit or
withdrawal; date ISO `YYYY-MM-DD`, the gateway's day in the platform's time zone). Importing is
a service; checking is three set-based queries over every imported line (the newest statement
wins when two carry the same reference) and every ledger record of the statements' periods.
A ledger record's amount is what it moved through the gateway clearing account: a deposit's
whole amount (GST included), under the deposit's reference; a paid withdrawal's payout (TDS
withheld), under the gateway reference it was reported paid with.
"""

from __future__ import annotations

import csv
import hashlib
import io
from datetime import date
from decimal import Decimal, InvalidOperation

from django.conf import settings
from django.db import transaction

from wallets import references
from wallets.errors import StatementInvalid
from wallets.models import CASH, GatewayStatement, GatewayStatementLine, PlatformAccount
from wallets.money.parsing import PAISA
from wallets.reconciliation.discrepancies import Row

KINDS = {
    "gateway_missing_in_ledger": "gateway line with no ledger record",
    "gateway_missing_in_statement": "ledger record missing from the gateway statement",
    "gateway_amount_mismatch": "gateway and ledger amounts differ",
}
REQUIRED_COLUMNS = {"reference", "amount", "date", "type"}


def statement_parse(text: str) -> list[GatewayStatementLine]:
    reader = csv.DictReader(io.StringIO(text))
    columns = {c.strip().lower() for c in reader.fieldnames or []}
    if not columns >= REQUIRED_COLUMNS:
        raise StatementInvalid(
            f"the statement needs the columns {', '.join(sorted(REQUIRED_COLUMNS))}"
        )
    lines, errors, seen = [], [], set()
    for number, raw in enumerate(reader, start=2):
        row = {(k or "").strip().lower(): (v or "").strip() for k, v in raw.items()}
        try:
            amount = Decimal(row["amount"])
            if not amount.is_finite() or amount <= 0 or amount != amount.quantize(PAISA):
                raise InvalidOperation
            day = date.fromisoformat(row["date"])
        except (InvalidOperation, ValueError):
            errors.append(f"line {number}: bad amount or date")
            continue
        kind = row["type"].lower()
        if kind not in GatewayStatementLine.Kind.values or not row["reference"]:
            errors.append(f"line {number}: type must be deposit or withdrawal, with a reference")
            continue
        if (kind, row["reference"]) in seen:
            errors.append(f"line {number}: {kind} {row['reference']} appears twice")
            continue
        seen.add((kind, row["reference"]))
        currency = (row.get("currency") or CASH).upper()
        lines.append(
            GatewayStatementLine(
                reference=row["reference"], kind=kind, amount=amount, currency=currency, date=day
            )
        )
    if errors:
        raise StatementInvalid("the statement was not imported", details={"errors": errors[:50]})
    if not lines:
        raise StatementInvalid("the statement has no lines")
    return lines


@transaction.atomic
def gateway_statement_import(*, name: str, content: bytes, imported_by=None) -> GatewayStatement:
    """Store a statement's lines (all or none); importing the same file twice is refused."""
    digest = hashlib.sha256(content).hexdigest()
    if GatewayStatement.objects.filter(sha256=digest).exists():
        raise StatementInvalid("this statement was already imported")
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise StatementInvalid("the statement is not UTF-8 text") from exc
    lines = statement_parse(text)
    statement = GatewayStatement.objects.create(
        name=name[:200],
        sha256=digest,
        imported_by=imported_by,
        period_start=min(line.date for line in lines),
        period_end=max(line.date for line in lines),
        line_count=len(lines),
    )
    for line in lines:
        line.statement = statement
    GatewayStatementLine.objects.bulk_create(lines, batch_size=5000)
    return statement


# The ledger side: deposits are read from the clearing account's entries of the statements'
# span through the (account, created_at) index; only a line with no match there (recorded on
# another day) is then looked up by reference. Withdrawals are the paid ones, named by the
# gateway's reference and dated by when the gateway reported them paid; their amount is what
# their approval moved into the clearing account (the payout, net of TDS). A few index range
# scans, never the whole entry or transfer table.
_LEDGER_SIDE = """
WITH lines AS MATERIALIZED (
    SELECT DISTINCT ON (l.kind, l.reference) l.kind, l.reference, l.amount, l.currency, l.date
      FROM wallets_gatewaystatementline l
      JOIN wallets_gatewaystatement st ON st.id = l.statement_id
     ORDER BY l.kind, l.reference, st.imported_at DESC, st.id DESC
), in_span AS MATERIALIZED (
    SELECT t.id, t.kind, t.reference, t.created_at, e.amount, e.amount_currency
      FROM wallets_entry e
      JOIN wallets_transfer t
        ON t.id = e.transfer_id AND t.created_at >= %(lo)s AND t.created_at < %(hi)s
     WHERE e.account_id = %(clearing)s AND e.created_at >= %(lo)s AND e.created_at < %(hi)s
       AND t.kind = 'deposit'
), elsewhere AS (
    SELECT t.id, t.kind, t.reference, t.created_at, e.amount, e.amount_currency
      FROM wallets_transfer t
      JOIN wallets_entry e ON e.transfer_id = t.id AND e.account_id = %(clearing)s
     WHERE t.reference = ANY (ARRAY(
               SELECT reference FROM lines WHERE kind = 'deposit'
               EXCEPT SELECT reference FROM in_span))
       AND t.kind = 'deposit'
       AND t.id NOT IN (SELECT id FROM in_span)
), paid AS (
    SELECT w.id, 'withdrawal'::varchar AS kind, w.gateway_reference AS reference,
           w.settled_at AS created_at, e.amount, e.amount_currency
      FROM wallets_withdrawal w
      JOIN wallets_entry e ON e.transfer_id = w.approval_transfer_id
                          AND e.account_id = %(clearing)s
     WHERE w.status = 'paid'
       AND (w.settled_at >= %(lo)s AND w.settled_at < %(hi)s
            OR w.gateway_reference = ANY (ARRAY(
                   SELECT l.reference FROM lines l WHERE l.kind = 'withdrawal')))
), ledger AS (
    SELECT kind, reference, abs(sum(amount)) AS amount, amount_currency AS currency,
           (min(created_at) AT TIME ZONE %(tz)s)::date AS date
      FROM (SELECT * FROM in_span UNION ALL SELECT * FROM elsewhere
            UNION ALL SELECT * FROM paid) AS c
     GROUP BY kind, reference, amount_currency
)
SELECT coalesce(l.kind, g.kind) AS kind, coalesce(l.reference, g.reference) AS reference,
       l.amount AS statement_amount, g.amount AS ledger_amount,
       coalesce(l.currency, g.currency) AS currency, l.date AS statement_date,
       g.date AS ledger_date,
       EXISTS (SELECT 1 FROM wallets_gatewaystatement st
                WHERE g.date BETWEEN st.period_start AND st.period_end) AS in_period
  FROM lines l FULL JOIN ledger g ON g.kind = l.kind AND g.reference = l.reference
 WHERE l.reference IS NULL OR g.reference IS NULL OR l.amount <> g.amount
"""

# The statements' span as constants, so the planner can use the created_at indexes.
_SPAN = """
SELECT (min(period_start)::timestamp AT TIME ZONE %(tz)s),
       ((max(period_end) + 1)::timestamp AT TIME ZONE %(tz)s)
  FROM wallets_gatewaystatement
"""


_CHECKS = (
    """
SELECT CASE WHEN ledger_amount IS NULL THEN 'gateway_missing_in_ledger'
            WHEN statement_amount IS NULL THEN 'gateway_missing_in_statement'
            ELSE 'gateway_amount_mismatch' END,
       kind || ' ' || reference, statement_amount, ledger_amount, currency,
       jsonb_build_object('reference', reference, 'type', kind,
                          'statement_date', statement_date, 'ledger_date', ledger_date)
  FROM ("""
    + _LEDGER_SIDE
    + """) AS gateway
 WHERE statement_amount IS NOT NULL OR in_period
"""
)


def gateway_statement(cursor, ctx: dict) -> list[Row]:
    cursor.execute("SELECT count(*) FROM wallets_gatewaystatement")
    ctx["stats"]["gateway_statements"] = cursor.fetchone()[0]
    if not ctx["stats"]["gateway_statements"]:
        return []
    cursor.execute(
        "SELECT id FROM wallets_account WHERE code = %s",
        [references.platform_account_code(PlatformAccount.GATEWAY_CLEARING)],
    )
    row = cursor.fetchone()
    cursor.execute(_SPAN, {"tz": settings.TIME_ZONE})
    lo, hi = cursor.fetchone()
    params = {"tz": settings.TIME_ZONE, "clearing": row[0] if row else None, "lo": lo, "hi": hi}
    cursor.execute(_CHECKS, params)
    return cursor.fetchall()
