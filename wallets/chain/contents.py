"""A transfer's content as the database holds it now: what its link's hash covers.

Three reads a batch (the transfers, their entries, the entries' accounts' codes) and one per witness
provider; amounts are read as PostgreSQL writes them (`numeric::text`, `12.50`), so the hash does
not depend on how Python would print them.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from rummy_ledger.db import read_connection
from wallets.chain.witnesses import witnesses_of
from wallets.models import Account, Entry, Transfer
from wallets.months import Month
from wallets.services.archives import archived_transfers, archives_in_force

TRANSFERS_SQL = f"""
SELECT id, kind, reference, memo, reverses_id, created_at
  FROM {Transfer._meta.db_table} WHERE id = ANY(%(ids)s)
"""

ENTRIES_SQL = f"""
SELECT transfer_id, id, account_id, amount::text, amount_currency
  FROM {Entry._meta.db_table} WHERE transfer_id = ANY(%(ids)s)
 ORDER BY transfer_id, id
"""

# by key, apart from the entries: joined, the planner hashes every account for each batch
ACCOUNTS_SQL = f"SELECT id, code FROM {Account._meta.db_table} WHERE id = ANY(%(ids)s)"


@dataclass(frozen=True)
class TransferContent:
    """`content` is hashed (None when the transfer is gone); `causes` names what caused it
    (`deal 12 (game sim-5, deal 3)`), for a report of a difference."""

    content: dict | None
    causes: tuple[str, ...] = ()


def transfer_contents(transfer_ids: Collection[int]) -> dict[int, TransferContent]:
    """The content of each of these transfers, by id (every id given has one)."""
    ids = list(transfer_ids)
    with read_connection().cursor() as cursor:
        cursor.execute(TRANSFERS_SQL, {"ids": ids})
        transfers = cursor.fetchall()
        cursor.execute(ENTRIES_SQL, {"ids": ids})
        rows = cursor.fetchall()
        cursor.execute(ACCOUNTS_SQL, {"ids": list({row[2] for row in rows})})
        codes = dict(cursor.fetchall())
    entries: dict[int, list[dict]] = {}
    for transfer_id, entry_id, account_id, amount, currency in rows:
        entries.setdefault(transfer_id, []).append(
            {"id": entry_id, "account": codes.get(account_id), "amount": amount,
             "currency": currency}
        )  # fmt: skip
    # every transfer has entries: one without any in the ledger may be in an archived month
    missing = {transfer_id: created_at for transfer_id, *_, created_at in transfers
               if transfer_id not in entries}  # fmt: skip
    if missing:
        entries.update(_archived(missing))
    witnesses = witnesses_of(ids)
    found = {}
    for transfer_id, kind, reference, memo, reverses, created_at in transfers:
        content = {
            "id": transfer_id,
            "kind": kind,
            "reference": reference,
            "memo": memo,
            "reverses": reverses,
            "created_at": created_at,
            "entries": entries.get(transfer_id, []),
        }
        caused_by = witnesses.get(transfer_id, {})
        if caused_by:
            content["caused_by"] = {of: w.content for of, w in caused_by.items()}
        causes = tuple(w.name for _, w in sorted(caused_by.items()))
        found[transfer_id] = TransferContent(content, causes)
    return {i: found.get(i, TransferContent(None)) for i in ids}


def _archived(missing: dict[int, datetime]) -> dict[int, list[dict]]:
    """These transfers' entries from their months' archives (`wallets.services.archives`)."""
    archives = {a.month: a for a in archives_in_force().filter(
        month__in={Month.of(created_at).name for created_at in missing.values()})}  # fmt: skip
    found = {}
    for transfer_id, created_at in missing.items():
        archive = archives.get(Month.of(created_at).name)
        if archive is not None:
            found[transfer_id] = archived_transfers(archive.path, archive.sha256).get(transfer_id)
    found = {transfer_id: rows for transfer_id, rows in found.items() if rows}
    accounts = {e.account_id for rows in found.values() for e in rows}
    codes = dict(Account.objects.filter(pk__in=accounts).values_list("pk", "code"))
    return {transfer_id: [
        {"id": e.id, "account": codes.get(e.account_id), "amount": e.amount,
         "currency": e.currency} for e in rows
    ] for transfer_id, rows in found.items()}  # fmt: skip
