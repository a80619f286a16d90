"""Archiving a closed month: its entries out of the ledger into a compressed file, and back.

`month_archive` exports the month's partition (`COPY ... TO STDOUT`, gzip) while a SHARE lock
holds it still, reads the file back and proves it (`archive_proof`: its SHA-256, its rows, and
the close's digest recomputed from the file and the previous close's balances), then detaches
the partition, records the archive and drops the table, all in one transaction: a failure at
any step leaves the month in the ledger. `month_restore` proves the file against its record
first and refuses a mismatch, then loads it into a table of its own, attaches it as the month's
partition (which gives it the ledger's indexes, foreign keys and triggers) and installs the
closed month's refusal again.

Archives are a prefix of history (the oldest closed month is archived first, the newest archived
month restored first), so a statement's lines are simply those after the newest archive, and
every balance at or after it comes from the closes (`wallets.services.balances`).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from wallets.errors import ArchiveInvalid
from wallets.models import (
    ChainLink,
    MonthArchive,
    MonthClose,
    MonthCloseBalance,
    ProposalStatus,
    Transfer,
)
from wallets.months import Month
from wallets.services.months import month_entries_refuse

COLUMNS = "id, amount_currency, amount, created_at, account_id, transfer_id"
_CHUNK = 1 << 20
_CENT = Decimal("0.01")


@dataclass(frozen=True)
class ArchivedEntry:
    """One entry as its archive holds it (amount as PostgreSQL wrote it: `12.50`)."""

    id: int
    currency: str
    amount: str
    created_at: str
    account_id: int
    transfer_id: int


@dataclass(frozen=True)
class ArchiveProof:
    sha256: str
    rows: int
    digest: str  # the close's digest recomputed from the file


def archive_entries(path: Path) -> Iterator[ArchivedEntry]:
    """The entries of an archive file, in id order (COPY's text format: no column of an entry
    holds a tab, a newline or a backslash)."""
    with gzip.open(path, "rt", encoding="utf-8", newline="\n") as rows:
        for line in rows:
            id_, currency, amount, created_at, account_id, transfer_id = line.rstrip("\n").split(
                "\t"
            )
            yield ArchivedEntry(
                int(id_), currency, amount, created_at, int(account_id), int(transfer_id)
            )


def archive_proof(path: Path, close: MonthClose) -> ArchiveProof:
    """Read the file once: its checksum, its rows, and the close's digest recomputed from them
    as `wallets.services.months` computes it in SQL (the previous close's balances plus the
    month's entries per account and currency). Amounts are counted in paise (PostgreSQL writes a
    numeric(18, 2) with its two decimals), which keeps the pass to a split and two integer
    additions a row."""
    sha = hashlib.sha256()
    with open(path, "rb") as raw:
        while chunk := raw.read(_CHUNK):
            sha.update(chunk)
    totals: dict[tuple[int, str], list[int]] = {}
    if close.previous_id is not None:
        previous_balances = MonthCloseBalance.objects.filter(close_id=close.previous_id)
        for account_id, currency, balance, inflow in previous_balances.values_list(
            "account_id", "currency", "balance", "inflow"
        ):
            totals[(account_id, currency)] = [_paise(balance), _paise(inflow)]
    moved: dict[tuple[str, str], list[int]] = {}
    rows = 0
    with gzip.open(path, "rt", encoding="utf-8", newline="\n") as lines:
        for line in lines:
            rows += 1
            _, currency, amount, _, account_id, _ = line.split("\t")
            paise = int(amount.replace(".", ""))
            total = moved.get((account_id, currency))
            if total is None:
                total = moved[(account_id, currency)] = [0, 0]
            total[0] += paise
            if paise > 0:
                total[1] += paise
    for (account_id, currency), (paise, inflow) in moved.items():
        total = totals.setdefault((int(account_id), currency), [0, 0])
        total[0] += paise
        total[1] += inflow
    lines_text = "\n".join(
        f"{account_id}:{currency}:{_text(balance)}:{_text(inflow)}"
        for (account_id, currency), (balance, inflow) in sorted(totals.items())
    )
    previous = close.previous.digest if close.previous_id is not None else ""
    summary = f"{previous}\n{close.month}\n{rows}\n{lines_text}"
    return ArchiveProof(sha.hexdigest(), rows, hashlib.sha256(summary.encode()).hexdigest())


def _paise(amount: Decimal) -> int:
    return int(amount.quantize(_CENT) * 100)


def _text(paise: int) -> str:
    """Paise as PostgreSQL writes a numeric(20, 2): `12.50`, `-0.05`, `0.00`."""
    sign = "-" if paise < 0 else ""
    return f"{sign}{abs(paise) // 100}.{abs(paise) % 100:02d}"


def archive_check(archive: MonthArchive) -> list[str]:
    """What differs between an archive's file and its record (nothing: an empty list)."""
    path = Path(archive.path)
    if not path.is_file():
        return [f"the archive of {archive.month} is missing: {path}"]
    proof = archive_proof(path, archive.close)
    differences = []
    if proof.sha256 != archive.sha256:
        differences.append(f"the archive of {archive.month} has another checksum: {path}")
    if proof.rows != archive.rows:
        differences.append(f"the archive of {archive.month} holds {proof.rows} entries, not "
                           f"{archive.rows}")  # fmt: skip
    if proof.digest != archive.digest:
        differences.append(f"the entries archived of {archive.month} do not prove its close")
    return differences


@functools.lru_cache(maxsize=1)
def archived_transfers(path: str, sha256: str) -> dict[int, list[ArchivedEntry]]:
    """An archive's entries by transfer, for the chain's verification (one month held at a time;
    the file was proved against its record, `sha256`, before it is read here)."""
    by_transfer: dict[int, list[ArchivedEntry]] = {}
    for entry in archive_entries(Path(path)):
        by_transfer.setdefault(entry.transfer_id, []).append(entry)
    return by_transfer


def archives_in_force():
    return MonthArchive.objects.filter(restored_at__isnull=True).select_related("close")


def month_archive(*, month: str, archived_by: AbstractBaseUser, now=None) -> MonthArchive:
    """Archive a closed month older than `LEDGER_ARCHIVE_AFTER_MONTHS`, the oldest not archived."""
    wanted = _month(month)
    close = _close_of(wanted)
    newest_allowed = Month.of(now or timezone.now()).next(-settings.LEDGER_ARCHIVE_AFTER_MONTHS - 1)
    if wanted > newest_allowed:
        raise ArchiveInvalid(
            f"{wanted} is too recent: months up to {newest_allowed} may be archived "
            f"(LEDGER_ARCHIVE_AFTER_MONTHS = {settings.LEDGER_ARCHIVE_AFTER_MONTHS})",
            details={"month": wanted.name},
        )
    if archives_in_force().filter(month=wanted.name).exists():
        raise ArchiveInvalid(f"{wanted} is archived already", details={"month": wanted.name})
    if (
        close.previous_id is not None
        and not archives_in_force().filter(month=close.previous.month).exists()
    ):
        raise ArchiveInvalid(
            f"months are archived oldest first: archive {close.previous.month} before {wanted}",
            details={"month": wanted.name},
        )
    unchained = Transfer.objects.filter(
        ~Exists(ChainLink.objects.filter(transfer_id=OuterRef("pk"))),
        created_at__gte=wanted.start,
        created_at__lt=wanted.end,
    )
    if unchained.exists():
        raise ArchiveInvalid(
            f"transfers of {wanted} are not chained yet: archive after the chain's job has run",
            details={"month": wanted.name},
        )
    directory = Path(settings.LEDGER_ARCHIVE_DIR)
    directory.mkdir(parents=True, exist_ok=True)
    stamp = timezone.now().strftime("%Y%m%dT%H%M%S%fZ")
    path = directory / f"{wanted.partition}-{stamp}.copy.gz"
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL TimeZone = 'UTC'")  # the file's times, whoever reads it
        cursor.execute(f'LOCK TABLE "{wanted.partition}" IN SHARE MODE')
        _export(cursor, wanted, path)
        proof = archive_proof(path, close)
        if proof.digest != close.digest or proof.rows != close.entries:
            raise ArchiveInvalid(
                f"the entries of {wanted} read back do not prove its close: nothing archived",
                details={"month": wanted.name, "file": str(path)},
            )
        cursor.execute("SET LOCAL lock_timeout = %s", [f"{settings.LEDGER_LOCK_TIMEOUT_MS}ms"])
        cursor.execute(f'ALTER TABLE wallets_entry DETACH PARTITION "{wanted.partition}"')
        archive = MonthArchive.objects.create(
            close=close,
            month=wanted.name,
            path=str(path),
            sha256=proof.sha256,
            rows=proof.rows,
            digest=proof.digest,
            archived_by=archived_by,
        )
        cursor.execute(f'DROP TABLE "{wanted.partition}"')
    return archive


def _export(cursor, month: Month, path: Path) -> None:
    """COPY's rows gathered into 1 MB writes, gzip level 1: on 337,000 entries (bench/as_of.py's
    seed, a loaded machine) 7 s and 3.6 MB, where level 6 took 17 s for 2.7 MB and level 9 48 s;
    COPY alone 3.8 s for 17.8 MB."""
    copy_sql = f'COPY (SELECT {COLUMNS} FROM "{month.partition}" ORDER BY id) TO STDOUT'
    with open(path, "wb") as raw:
        with (
            gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, compresslevel=1) as gz,
            cursor.cursor.copy(copy_sql) as copy,
        ):
            pending = bytearray()
            for data in copy:  # a row at a time
                pending += data
                if len(pending) >= _CHUNK:
                    gz.write(pending)
                    pending.clear()
            gz.write(pending)
        raw.flush()
        os.fsync(raw.fileno())
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def month_restore(*, month: str, restored_by: AbstractBaseUser) -> MonthArchive:
    """Put an archived month back into the ledger from its file (the newest archive first),
    after proving the file against its record: a mismatch is refused and nothing changes."""
    wanted = _month(month)
    archive = archives_in_force().filter(month=wanted.name).first()
    if archive is None:
        raise ArchiveInvalid(f"{wanted} is not archived", details={"month": wanted.name})
    newest = archives_in_force().order_by("-month").first()
    if newest.month != archive.month:
        raise ArchiveInvalid(
            f"the newest archive is restored first: restore {newest.month} before {wanted}",
            details={"month": wanted.name},
        )
    differences = archive_check(archive)
    if differences:
        raise ArchiveInvalid(
            "; ".join(differences) + ": nothing restored", details={"month": wanted.name}
        )
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL TimeZone = 'UTC'")
        cursor.execute(
            f'CREATE TABLE "{wanted.partition}" '
            "(LIKE wallets_entry INCLUDING DEFAULTS INCLUDING CONSTRAINTS)"
        )
        load = f'COPY "{wanted.partition}" ({COLUMNS}) FROM STDIN'
        with cursor.cursor.copy(load) as copy, gzip.open(archive.path, "rb") as gz:
            while chunk := gz.read(_CHUNK):
                copy.write(chunk)
        cursor.execute("SET LOCAL lock_timeout = %s", [f"{settings.LEDGER_LOCK_TIMEOUT_MS}ms"])
        cursor.execute(
            f'ALTER TABLE wallets_entry ATTACH PARTITION "{wanted.partition}" '
            "FOR VALUES FROM (%s) TO (%s)",
            [wanted.start, wanted.end],
        )
        month_entries_refuse(cursor, wanted)
        archive.restored_at, archive.restored_by = timezone.now(), restored_by
        archive.save(update_fields=["restored_at", "restored_by"])
    return archive


def _month(text: str) -> Month:
    try:
        return Month.parse(text)
    except ValueError as exc:
        raise ArchiveInvalid(str(exc), details={"month": text}) from exc


def _close_of(month: Month) -> MonthClose:
    close = (
        MonthClose.objects.filter(month=month.name, status=ProposalStatus.APPROVED)
        .select_related("previous")
        .first()
    )
    if close is None:
        raise ArchiveInvalid(f"{month} is not closed", details={"month": month.name})
    return close
