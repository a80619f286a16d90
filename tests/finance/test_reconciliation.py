from django.db import connection

from tests.conftest import funded_player
from wallets.models import ReconciliationReport
from wallets.reconciliation import reconcile_run


def kinds(report):
    return sorted(report.discrepancies.values_list("kind", flat=True))


def test_clean_ledger_is_clean(db):
    funded_player("p1", "100.00")
    funded_player("p2", "250.00")

    report = reconcile_run(trigger="command")

    assert report.status == ReconciliationReport.Status.CLEAN, list(
        report.discrepancies.values()
    )
    assert report.stats["entries"] == 4


def test_tampered_cached_balance(db):
    accounts = funded_player("p1", "100.00")
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE wallets_account SET balance = 150 WHERE id = %s", [accounts["deposit"].pk]
        )

    report = reconcile_run(trigger="command")

    assert report.status == ReconciliationReport.Status.DISCREPANCIES
    assert kinds(report) == ["cached_balance", "currency_total"]
