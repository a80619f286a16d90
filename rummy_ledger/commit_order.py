"""Reading a table's rows in the order their transactions committed, every row exactly once: the
reader the events feed and the ledger's hash chain share.

The trap of reading by id: ids are taken when a row is inserted, not when it commits, so a
transaction that took id 7 and commits after the one that took id 8 would be skipped by a reader
that had read up to 8. Each row read this way carries its transaction's id (`txid`, an `xid8`
defaulting to `pg_current_xact_id()`), the position is a (txid, id) pair, and a read returns only
rows of transactions older than the oldest one still running
(`txid < pg_snapshot_xmin(pg_current_snapshot())`): those have all committed or rolled back, and
every transaction still to commit has a larger txid than anything read. A long transaction
therefore holds the reader back until it ends.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection, models


class Xid8Field(models.BigIntegerField):
    """PostgreSQL's `xid8`: the id of the transaction that wrote the row (a 64-bit counter that
    never wraps), read as an integer."""

    def db_type(self, connection) -> str:
        return "xid8"

    def from_db_value(self, value, expression, connection):
        return None if value is None else int(value)

    def get_db_prep_value(self, value, connection, prepared=False):
        return value  # written by its default, pg_current_xact_id()


@dataclass(frozen=True, order=True)
class Position:
    """Where a reader stands: the last (txid, id) it read."""

    txid: int
    row_id: int

    def __str__(self) -> str:
        return f"{self.txid}-{self.row_id}"


START = Position(0, 0)


def after(txid: str = "txid", row_id: str = "id") -> str:
    """The WHERE condition of a commit-order read: rows after the position passed as the
    parameters `%(after_txid)s` and `%(after_id)s`, of finished transactions only; order by
    (`txid`, `id`)."""
    return (
        f"({txid}, {row_id}) > (%(after_txid)s::text::xid8, %(after_id)s)"
        f" AND {txid} < pg_snapshot_xmin(pg_current_snapshot())"
    )


def after_parameters(position: Position) -> dict:
    return {"after_txid": str(position.txid), "after_id": position.row_id}


def reader_start() -> Position:
    """Where a reader starting now begins: after every transaction already finished."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint")
        (xmin,) = cursor.fetchone()
    return Position(xmin, 0)
