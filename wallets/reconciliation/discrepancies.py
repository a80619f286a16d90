"""What a check hands back, and the one place its findings are stored.

A check reads (on the snapshot's connection: a standby's when reconciliation reads one) and
returns its discrepancies as rows `(kind, subject, expected, actual, currency, details)`, in
that order, `details` a JSON object (text or a dict). `discrepancies_store` writes a report's
rows on the primary, with one statement per batch: a hot standby refuses every write, a
temporary table's included.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from decimal import Decimal

from django.core.serializers.json import DjangoJSONEncoder
from django.db import DEFAULT_DB_ALIAS, connections

from wallets.models import Discrepancy

Row = tuple  # (kind, subject, expected, actual, currency, details)
BATCH = 10_000

_STORE = f"""
INSERT INTO {Discrepancy._meta.db_table}
       (report_id, kind, subject, expected, actual, currency, details)
SELECT %s, kind, subject, expected, actual, currency, details::jsonb
  FROM unnest(%s::text[], %s::text[], %s::numeric[], %s::numeric[], %s::text[], %s::text[])
       AS d(kind, subject, expected, actual, currency, details)
"""


def _json(details) -> str:
    return details if isinstance(details, str) else json.dumps(details, cls=DjangoJSONEncoder)


def _numeric(values) -> list[Decimal | None]:
    """One type for the array (a check may give an int, as `partitions_ahead` does)."""
    return [None if v is None else Decimal(v) for v in values]


def discrepancies_store(report_id: int, rows: Sequence[Row]) -> None:
    """Store a report's discrepancies on the primary."""
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        for start in range(0, len(rows), BATCH):
            batch = rows[start : start + BATCH]
            kinds, subjects, expected, actual, currencies, details = zip(*batch, strict=True)
            cursor.execute(
                _STORE,
                [
                    report_id,
                    list(kinds),
                    [s[:200] for s in subjects],
                    _numeric(expected),
                    _numeric(actual),
                    list(currencies),
                    [_json(d) for d in details],
                ],
            )
