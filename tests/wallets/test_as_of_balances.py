"""As-of balances and statements from the month closes: the last close before a moment plus the
entries since, equal to what every entry before it adds up to, and read from the partitions
after the close only."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import staff, staff_client
from tests.wallets.months_ledger import FIRST, SECOND, entries_sum, middle, months_ledger
from wallets.models import Account, Entry
from wallets.months import Month
from wallets.roles import VIEWER
from wallets.services.balances import balances_at
from wallets.services.transfers import balance, statement

pytestmark = pytest.mark.django_db


def test_a_balance_after_a_close_is_the_closing_balance_plus_the_entries_since():
    books = months_ledger()
    bob = books.bob["deposit"]
    later = timezone.now() + timedelta(seconds=1)
    assert balances_at(accounts=[bob.pk], moment=FIRST.end) == {bob.pk: Decimal("40.25")}
    assert balances_at(accounts=[bob.pk], moment=SECOND.end) == {bob.pk: Decimal("50.25")}
    assert balances_at(accounts=[bob.pk], moment=later) == {bob.pk: Decimal("45.25")}
    assert balance(account=bob, at=later) == balance(account=bob)  # the cached balance
    assert balances_at(accounts=[bob.pk], moment=FIRST.start) == {}  # nothing before it


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_any_moment_agrees_with_the_sum_of_every_entry_before_it(data):
    """Month bounds, the middle of a month, an entry's own time and a microsecond either side."""
    if not Entry.objects.exists():
        months_ledger()
    accounts = list(Entry.objects.values_list("account_id", flat=True).distinct())
    times = list(Entry.objects.values_list("created_at", flat=True).distinct())
    moment = data.draw(
        st.sampled_from([FIRST.start, FIRST.end, SECOND.end, middle(FIRST), middle(SECOND), *times])
        | st.sampled_from(times).map(lambda t: t + timedelta(microseconds=1))
        | st.sampled_from(times).map(lambda t: t - timedelta(microseconds=1))
    )
    found = balances_at(accounts=accounts, moment=moment)
    for account in Account.objects.filter(pk__in=accounts):
        assert str(found.get(account.pk, Decimal("0.00"))) == entries_sum(account, moment)


def _plans(run) -> str:
    with CaptureQueriesContext(connection) as captured:
        run()
    plans = []
    with connection.cursor() as cursor:
        for query in captured.captured_queries:
            if "wallets_entry" in query["sql"]:
                cursor.execute("EXPLAIN " + query["sql"])
                plans.append("\n".join(row[0] for row in cursor.fetchall()))
    assert plans, "no query read the entries"
    return "\n".join(plans)


def test_an_as_of_balance_after_a_close_reads_no_closed_months_partition():
    books = months_ledger()
    bob = books.bob["deposit"]
    now = Month.of(timezone.now())
    plan = _plans(lambda: balances_at(accounts=[bob.pk], moment=timezone.now()))
    assert now.partition in plan
    for closed in (FIRST, SECOND):
        assert closed.partition not in plan
    # and a statement of this month reads this month's partition only, its opening included
    plan = _plans(lambda: statement(account=bob, start=now.start, end=now.end))
    assert now.partition in plan and FIRST.partition not in plan and SECOND.partition not in plan


def test_a_statement_opens_and_closes_from_the_closes():
    books = months_ledger()
    bob = books.bob["deposit"]
    report = statement(account=bob, start=SECOND.start, end=timezone.now() + timedelta(seconds=1))
    assert report.opening.amount == Decimal("40.25")
    assert [str(line.running_balance.amount) for line in report.lines] == ["50.25", "45.25"]
    assert report.closing.amount == Decimal("45.25")
    page = statement(account=bob, start=SECOND.start, end=SECOND.end, first=0, count=1)
    assert page.closing.amount == Decimal("50.25") and page.line_count == 1


def test_the_admin_statement_and_its_csv_open_from_the_close():
    books = months_ledger()
    player = books.bob["deposit"].player
    url = reverse("admin:wallets_player_statement", args=[player.pk])
    local = timezone.localtime
    params = {
        "bucket": "deposit",
        "start": local(SECOND.start).date().isoformat(),
        "end": local(SECOND.end - timedelta(days=1)).date().isoformat(),
    }
    page = staff_client(staff("viewer", VIEWER)).get(url, params)
    assert page.status_code == 200
    shown = page.context["statement"]
    assert (str(shown.opening.amount), str(shown.closing.amount)) == ("40.25", "50.25")
    rows = staff_client(staff("viewer2", VIEWER)).get(url, {**params, "format": "csv"})
    lines = rows.content.decode("utf-8-sig").splitlines()
    assert "40.25" in lines[1] and lines[-1].endswith(",50.25,INR") and len(lines) == 4
