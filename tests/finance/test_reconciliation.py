"""Reconciliation finds each kind of discrepancy planted by raw SQL, and a clean ledger is clean."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from tests.builders import funded_player, points_game, tamper
from wallets.models import Entry, GatewayStatementLine, ReconciliationReport, Transfer
from wallets.reconciliation import Check, reconcile_run
from wallets.reconciliation.gateway import StatementInvalid, gateway_statement_import
from wallets.tasks import reconcile_nightly

pytestmark = pytest.mark.django_db


def kinds(report) -> list[str]:
    return sorted(report.discrepancies.values_list("kind", flat=True))


def sql(statement: str, params=None) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def test_clean_ledger_with_a_finished_game_is_clean(game_server):
    funded_player("p1", "100.00")
    game = points_game(game_server, "g1")
    assert game.status == "finished"

    report = reconcile_run(trigger="command")

    assert report.status == ReconciliationReport.Status.CLEAN, list(report.discrepancies.values())
    assert report.discrepancy_count == 0
    assert report.stats["entries"] == Entry.objects.count()
    assert set(report.stats["checks"]) >= {"transfers sum to zero", "gateway statement"}


def test_tampered_cached_balance():
    accounts = funded_player("p1", "100.00")
    sql("UPDATE wallets_account SET balance = 150 WHERE id = %s", [accounts["deposit"].pk])

    report = reconcile_run(trigger="command")

    assert report.status == ReconciliationReport.Status.DISCREPANCIES
    assert kinds(report) == ["cached_balance", "currency_total"]
    found = report.discrepancies.get(kind="cached_balance")
    assert (found.subject, found.expected, found.actual) == ("player:p1:deposit", 100, 150)


def test_entry_deleted_behind_the_apps_back():
    accounts = funded_player("p1", "100.00")
    entry = Entry.objects.get(account=accounts["deposit"])
    tamper("DELETE FROM wallets_entry WHERE id = %s", [entry.pk])

    report = reconcile_run(trigger="command")

    assert kinds(report) == ["cached_balance", "currency_total", "unbalanced_transfer"]
    unbalanced = report.discrepancies.get(kind="unbalanced_transfer")
    assert unbalanced.details["transfer_id"] == entry.transfer_id
    assert unbalanced.actual == -100


def test_entry_amount_changed_on_a_platform_account_only():
    funded_player("p1", "100.00")
    clearing = Entry.objects.get(account__code="platform:gateway_clearing")
    tamper("UPDATE wallets_entry SET amount = -90 WHERE id = %s", [clearing.pk])

    report = reconcile_run(trigger="command")

    # the deposit of 140.00 now reads 90.00: its 40.00 of GST is neither 40/140 of it nor its
    # own record's amount (GST payable still holds the recorded GST: no mismatch there)
    assert kinds(report) == ["currency_total", "gst_deposit_mismatch", "unbalanced_transfer"]


def test_finished_game_with_money_left_in_escrow(game_server):
    game = points_game(game_server, "g1", settle=False)  # entries collected, deal unsettled
    sql("UPDATE tournaments_game SET status = 'finished' WHERE id = %s", [game.pk])
    sql("UPDATE tournaments_deal SET status = 'settled' WHERE game_id = %s", [game.pk])

    report = reconcile_run(trigger="command")

    assert kinds(report) == ["escrow_not_empty", "game_unbalanced"]
    escrow = report.discrepancies.get(kind="escrow_not_empty")
    assert escrow.actual == game.collected > 0


def test_game_whose_recorded_payouts_do_not_add_up(game_server):
    game = points_game(game_server, "g1")
    sql("UPDATE tournaments_game SET fee = fee + 1 WHERE id = %s", [game.pk])

    report = reconcile_run(trigger="command")

    assert kinds(report) == ["game_unbalanced"]


def test_game_open_too_long_and_deal_not_settled(game_server, settings):
    settings.RECONCILE_STUCK_GAME_HOURS = 24
    settings.RECONCILE_UNSETTLED_DEAL_MINUTES = 15
    game = points_game(game_server, "g1", settle=False)
    fresh = reconcile_run(trigger="command")
    assert fresh.status == ReconciliationReport.Status.CLEAN  # not yet late
    long_ago = timezone.now() - timedelta(days=2)
    sql("UPDATE tournaments_game SET created_at = %s WHERE id = %s", [long_ago, game.pk])
    sql("UPDATE tournaments_deal SET created_at = %s WHERE game_id = %s", [long_ago, game.pk])

    report = reconcile_run(trigger="command")

    assert kinds(report) == ["deal_unsettled", "game_stuck"]


def statement(*rows: str, name: str = "gw.csv"):
    body = "reference,amount,date,type\n" + "\n".join(rows) + "\n"
    return gateway_statement_import(name=name, content=body.encode())


def test_gateway_statement_against_recorded_deposits():
    today = timezone.localdate().isoformat()
    funded_player("p1", "100.00")  # reference fund-p1-100.00
    funded_player("p2", "200.00")  # missing from the statement
    funded_player("p3", "300.00")  # amount differs
    statement(  # what the players paid: 140.00 credits 100.00 (GST 40/140)
        f"fund-p1-100.00,140.00,{today},deposit",
        f"fund-p3-300.00,430.00,{today},deposit",  # 420.00 recorded
        f"gw-999,50.00,{today},deposit",  # no deposit recorded
    )

    report = reconcile_run(trigger="command")

    found = {(d.kind, d.subject) for d in report.discrepancies.all()}
    assert found == {
        ("gateway_missing_in_statement", "deposit fund-p2-200.00"),
        ("gateway_amount_mismatch", "deposit fund-p3-300.00"),
        ("gateway_missing_in_ledger", "deposit gw-999"),
    }


def test_gateway_statement_that_matches_is_clean():
    today = timezone.localdate().isoformat()
    funded_player("p1", "100.00")
    statement(f"fund-p1-100.00,140.00,{today},deposit")

    assert reconcile_run(trigger="command").status == ReconciliationReport.Status.CLEAN


def test_statement_import_refuses_bad_files_and_writes_nothing():
    with pytest.raises(StatementInvalid):
        statement("x,abc,2026-01-01,deposit")
    with pytest.raises(StatementInvalid):
        statement("x,1.00,2026-01-01,refund")
    with pytest.raises(StatementInvalid):
        gateway_statement_import(name="n", content=b"ref,amt\n1,2\n")
    statement("x,1.00,2026-01-01,deposit")
    with pytest.raises(StatementInvalid, match="already imported"):
        statement("x,1.00,2026-01-01,deposit")
    assert GatewayStatementLine.objects.count() == 1


def test_command_exits_non_zero_on_discrepancy_and_zero_when_clean(tmp_path, capsys):
    funded_player("p1", "100.00")
    call_command("reconcile", "--no-progress")  # clean: no SystemExit
    assert "clean" in capsys.readouterr().out

    csv_file = tmp_path / "gw.csv"
    csv_file.write_text("reference,amount,date,type\ngw-1,5.00,2026-01-01,deposit\n")
    with pytest.raises(SystemExit) as exit_info:
        call_command("reconcile", "--no-progress", "--statement", str(csv_file))
    assert exit_info.value.code == 1
    assert "gateway_missing_in_ledger: 1" in capsys.readouterr().out


def test_nightly_task_stores_a_report_and_moves_no_money():
    funded_player("p1", "100.00")
    transfers = Transfer.objects.count()

    report_id = reconcile_nightly()

    report = ReconciliationReport.objects.get(pk=report_id)
    assert (report.trigger, report.status) == ("schedule", "clean")
    assert Transfer.objects.count() == transfers


def test_beat_schedule_runs_nightly_at_the_configured_time(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["wallets-reconcile-nightly"]
    assert entry["task"] == "wallets.tasks.reconcile_nightly"
    assert entry["schedule"].hour == {2} and entry["schedule"].minute == {0}
    assert settings.CELERY_TIMEZONE == "Asia/Kolkata"


def test_gateway_line_dated_another_day_is_found_by_reference():
    yesterday = (timezone.localdate() - timedelta(days=1)).isoformat()
    funded_player("p1", "100.00")  # recorded today
    statement(f"fund-p1-100.00,140.00,{yesterday},deposit")  # the gateway's day: yesterday

    assert reconcile_run(trigger="command").status == ReconciliationReport.Status.CLEAN

    statement(f"fund-p1-100.00,90.00,{yesterday},deposit", name="corrected.csv")
    report = reconcile_run(trigger="command")
    assert kinds(report) == ["gateway_amount_mismatch"]  # the newest statement wins


def test_entry_moved_to_another_currency():
    accounts = funded_player("p1", "100.00")
    entry = Entry.objects.get(account=accounts["deposit"])
    tamper("UPDATE wallets_entry SET amount_currency = 'CHP' WHERE id = %s", [entry.pk])

    report = reconcile_run(trigger="command")

    assert "foreign_currency" in kinds(report)
    assert "unbalanced_transfer" in kinds(report)
    assert report.discrepancies.get(kind="foreign_currency").subject == "player:p1:deposit"


def test_checks_run_with_reconciliations_own_settings(settings):
    settings.RECONCILE_WORK_MEM = "77MB"
    seen = {}

    def settings_read(cursor, ctx):
        cursor.execute("SELECT current_setting('jit'), current_setting('work_mem')")
        seen["jit"], seen["work_mem"] = cursor.fetchone()
        return []

    check = Check("settings", settings_read, {})
    assert reconcile_run(trigger="command", checks=[check]).status == "clean"
    assert seen == {"jit": "off", "work_mem": "77MB"}
