"""Archiving a closed month over real PostgreSQL: its entries leave the ledger for a checked
gzip file; statements still open and close from the closes, the chain and the reconciliation
stay clean; a tampered file is found by verify_ledger and refused by a restore; the good file
puts the month back, closed as before."""

from __future__ import annotations

import gzip
import io
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from tests.builders import chain_caught_up, staff, staff_client
from tests.wallets.invariants import ledger_violations
from tests.wallets.months_ledger import (
    FIRST,
    SECOND,
    entries_sum,
    middle,
    months_ledger,
    months_reopened,
)
from wallets.errors import ArchiveInvalid, MonthArchived
from wallets.models import Account, Entry, MonthArchive
from wallets.reconciliation import reconcile_run
from wallets.roles import OPERATOR, VIEWER
from wallets.services.archives import month_archive, month_restore
from wallets.services.balances import balances_at
from wallets.services.transfers import statement

pytestmark = pytest.mark.django_db(transaction=True)


def command(*args: str) -> tuple[int, str, str]:
    """A management command: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command(*args, stdout=out, stderr=err)
        status = 0
    except SystemExit as exc:
        status = exc.code
    return status, out.getvalue(), err.getvalue()


def partition_exists(name: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass(%s) IS NOT NULL", [f'"{name}"'])
        return cursor.fetchone()[0]


def reconciled_clean() -> list[str]:
    report = reconcile_run(trigger="manual")
    return sorted(report.discrepancies.values_list("kind", flat=True))


@pytest.fixture
def archive_dir(tmp_path):
    with override_settings(LEDGER_ARCHIVE_DIR=tmp_path, LEDGER_ARCHIVE_AFTER_MONTHS=0):
        yield tmp_path


@pytest.fixture
def books(eager):
    months_reopened()
    ledger = months_ledger()
    chain_caught_up()
    yield ledger
    months_reopened()


def test_archive_statements_verify_tamper_and_restore(books, archive_dir):
    bob = books.bob["deposit"]
    later = timezone.now() + timedelta(seconds=1)
    before = {a.pk: entries_sum(a, later) for a in Account.objects.all()}
    first_entries = Entry.objects.filter(created_at__gte=FIRST.start, created_at__lt=FIRST.end)
    rows = first_entries.count()
    operator = staff("archivist", OPERATOR)

    # when: the first month is archived by the command
    status, out, err = command("archive_month", FIRST.name, "--by", "archivist")
    assert (status, err) == (0, "")
    archive = MonthArchive.objects.get(month=FIRST.name)
    path = Path(archive.path)
    assert path.parent == archive_dir and path.is_file() and archive.rows == rows > 0
    assert archive.digest == books.closes[0].digest and archive.archived_by == operator
    assert archive.sha256 in out
    assert not partition_exists(FIRST.partition) and first_entries.count() == 0

    # then: statements answer from the closes; inside the archived month a balance is refused
    assert balances_at(accounts=[bob.pk], moment=FIRST.end) == {bob.pk: Decimal("40.25")}
    report = statement(account=bob, start=FIRST.start, end=later)
    assert str(report.opening.amount) == "0.00" and str(report.closing.amount) == "45.25"
    assert [str(line.running_balance.amount) for line in report.lines] == ["50.25", "45.25"]
    assert report.archived_until == FIRST.end and str(report.archived_balance.amount) == "40.25"
    with pytest.raises(MonthArchived, match=FIRST.name):
        statement(account=bob, start=middle(FIRST), end=later)
    assert balances_at(accounts=list(before), moment=later) == {
        pk: Decimal(total) for pk, total in before.items() if total != "0.00"
    }
    # the admin's statement says so for a day inside it, and answers from its first day
    url = reverse("admin:wallets_player_statement", args=[bob.player_id])
    client = staff_client(staff("viewer", VIEWER))
    day = timezone.localtime(middle(FIRST)).date().isoformat()
    inside = client.get(url, {"bucket": "deposit", "start": day, "end": day})
    assert inside.status_code == 200 and inside.context["statement"] is None
    assert f"the entries of {FIRST.name} are archived" in inside.content.decode()
    first_day = timezone.localtime(FIRST.start).date().isoformat()
    last_day = timezone.localtime(FIRST.end - timedelta(days=1)).date().isoformat()
    whole = client.get(url, {"bucket": "deposit", "start": first_day, "end": last_day})
    assert str(whole.context["statement"].closing.amount) == "40.25"
    # the chain recomputes the archived transfers from the file; reconciliation is clean
    status, out, err = command("verify_ledger")
    assert (status, err) == (0, "") and "1 archived months" in out
    assert reconciled_clean() == []
    assert command("reconcile", "--month", FIRST.name, "--no-progress")[0] == 0

    # when: the file is tampered with (one amount changed), keeping the good bytes aside
    good = path.read_bytes()
    lines = gzip.decompress(good).decode().splitlines(keepends=True)
    fields = lines[0].split("\t")
    fields[2] = str(Decimal(fields[2]) + 1)
    path.write_bytes(gzip.compress("".join(["\t".join(fields), *lines[1:]]).encode()))

    # then: verify_ledger and reconciliation find it, and a restore refuses it
    status, out, err = command("verify_ledger")
    assert status == 1 and f"the archive of {FIRST.name} has another checksum" in err
    assert "do not prove its close" in err
    assert reconciled_clean() == []  # the nightly run reads from the last close only
    status, out, err = command("reconcile", "--month", FIRST.name, "--no-progress")
    assert status != 0 and "month_archive" in out
    with pytest.raises(CommandError, match="nothing restored"):
        call_command("archive_month", FIRST.name, "--by", "archivist", "--restore")
    assert not partition_exists(FIRST.partition)
    assert MonthArchive.objects.get(pk=archive.pk).restored_at is None

    # when: the good file is back, the month is restored from it
    path.write_bytes(good)
    status, out, err = command("archive_month", FIRST.name, "--by", "archivist", "--restore")
    assert (status, err) == (0, "") and f"{rows} entries back" in out

    # then: the entries are back, the month is closed as before, and everything is clean
    assert first_entries.count() == rows
    assert MonthArchive.objects.get(pk=archive.pk).restored_by == operator
    assert {a.pk: entries_sum(a, later) for a in Account.objects.all()} == before
    inside = middle(FIRST) + timedelta(microseconds=1)  # just after its entries
    assert str(statement(account=bob, start=inside, end=later).opening.amount) == "40.25"
    with (
        pytest.raises(DatabaseError, match="is closed"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(
            "INSERT INTO wallets_entry (transfer_id, account_id, amount, amount_currency, "
            "created_at) SELECT transfer_id, account_id, amount, amount_currency, created_at "
            "FROM wallets_entry WHERE created_at < %s LIMIT 1",
            [FIRST.end],
        )
    assert reconciled_clean() == [] and ledger_violations() == []
    assert command("reconcile", "--month", FIRST.name, "--no-progress")[0] == 0
    assert command("verify_ledger")[0] == 0


def test_only_a_closed_month_old_enough_and_in_order_is_archived(books, archive_dir):
    operator = staff("archivist", OPERATOR)
    with (
        override_settings(LEDGER_ARCHIVE_AFTER_MONTHS=1),
        pytest.raises(ArchiveInvalid, match="too recent"),
    ):
        month_archive(month=SECOND.name, archived_by=operator)
    with pytest.raises(ArchiveInvalid, match=f"archive {FIRST.name} before"):
        month_archive(month=SECOND.name, archived_by=operator)
    this = FIRST.next(2)
    with pytest.raises(ArchiveInvalid, match=r"not closed|too recent"):
        month_archive(month=this.name, archived_by=operator)
    with pytest.raises(ArchiveInvalid, match="YYYY-MM"):
        month_archive(month="2025-13", archived_by=operator)
    with pytest.raises(ArchiveInvalid, match="not archived"):
        month_restore(month=FIRST.name, restored_by=operator)
    assert not MonthArchive.objects.exists() and not list(archive_dir.iterdir())
    # both in order, then restored newest first
    month_archive(month=FIRST.name, archived_by=operator)
    month_archive(month=SECOND.name, archived_by=operator)
    with pytest.raises(ArchiveInvalid, match=f"restore {SECOND.name} before"):
        month_restore(month=FIRST.name, restored_by=operator)
    bob = books.bob["deposit"]
    report = statement(account=bob, start=FIRST.start, end=timezone.now() + timedelta(seconds=1))
    assert [str(line.running_balance.amount) for line in report.lines] == ["45.25"]
    assert str(report.closing.amount) == "45.25" and reconciled_clean() == []
    with pytest.raises(CommandError, match="member of staff"):
        call_command("archive_month", FIRST.name, "--by", "nobody")
