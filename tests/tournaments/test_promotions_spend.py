"""The promotions spend (tournaments/tournaments/promotions_spend.py) from the ledger's entries on
promotions: each kind of spend in its column, what comes back counted back, chips apart, the
total exactly what promotions' balance went down by; the report page and its CSV."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from decimal import Decimal

import pytest
from django.db.models import Sum
from django.utils import timezone

from rummy_ledger.api.keys import api_client_create
from tests.builders import staff, staff_client
from tests.tournaments.tournament_builders import spend_books
from tests.wallets.invariants import ledger_violations
from tournaments.tournaments.admin.promotions import PROMOTIONS
from tournaments.tournaments.promotions_spend import COLUMNS, promotions_spend_rows
from wallets.models import Entry
from wallets.services.accounts import platform_accounts

pytestmark = pytest.mark.django_db
D = Decimal


def promotions_ids() -> list[int]:
    accounts = platform_accounts()
    return [accounts[code].pk for code in PROMOTIONS]


def day_bounds(day) -> tuple[datetime, datetime]:
    tz = timezone.get_current_timezone()
    return (
        datetime.combine(day, time.min, tzinfo=tz),
        datetime.combine(day + timedelta(days=1), time.min, tzinfo=tz),
    )


def balances() -> dict[str, Decimal]:
    """Each promotions account's balance from its entries, by currency."""
    rows = (
        Entry.objects.filter(account_id__in=promotions_ids())
        .values_list("amount_currency")
        .annotate(total=Sum("amount"))
        .order_by()
    )
    return dict(rows)


@pytest.fixture
def books():
    client, _ = api_client_create(name="lobby", scopes=["games"])
    before = balances()
    spend_books(client)
    return before


def test_each_spend_is_in_its_column_and_the_total_is_what_left_promotions(books):
    today = timezone.localdate()

    rows = promotions_spend_rows(
        promotions_account_ids=promotions_ids(),
        start=day_bounds(today)[0],
        end=day_bounds(today)[1],
    )

    by_currency = {r["currency"]: r for r in rows}
    assert [r["day"] for r in rows] == [today, today]
    inr = by_currency["INR"]
    assert [inr[c] for c in COLUMNS] == [
        D("117.50"),  # overlay: sunday-100's guarantee made up
        D("200.00"),  # two tickets issued by finance
        D("-100.00"),  # fb's expired back
        D("30.00"),  # the leaderboard prize
        D("20.00"),  # the bonus
        D("0.00"),  # no bonus expired
        D("0.00"),  # nothing else
        D("267.50"),
    ]
    chips = by_currency["CHP"]
    assert (chips["overlay"], chips["total"]) == (D("1000.00"), D("1000.00"))
    # the books: the total is exactly what each promotions account went down by
    after = balances()
    for currency, row in by_currency.items():
        assert books.get(currency, D(0)) - after[currency] == row["total"]
    assert ledger_violations() == []


def test_a_period_without_it_shows_nothing_and_a_day_is_an_ist_day(books):
    today = timezone.localdate()
    start, _ = day_bounds(today)

    yesterday = promotions_spend_rows(
        promotions_account_ids=promotions_ids(), start=start - timedelta(days=1), end=start
    )
    # the same UTC instants cut at UTC midnight would be another range: the day is IST's
    both = promotions_spend_rows(
        promotions_account_ids=promotions_ids(),
        start=start - timedelta(days=1),
        end=start + timedelta(days=1),
    )

    assert yesterday == []
    assert {r["day"] for r in both} == {today}


def test_the_page_shows_the_totals_and_exports_the_csv(books):
    tab = staff_client(staff("viewer-1", "finance viewer"))
    today = timezone.localdate()

    page = tab.get("/admin/tournaments/tournament/promotions/")
    csv = tab.get("/admin/tournaments/tournament/promotions/", {"format": "csv"})
    refused = tab.get(
        "/admin/tournaments/tournament/promotions/",
        {"start": today.isoformat(), "end": (today - timedelta(days=1)).isoformat()},
    )

    assert page.status_code == 200
    assert "₹267.50" in page.content.decode() and "-₹100.00" in page.content.decode()
    assert csv.status_code == 200
    text = csv.content.decode("utf-8-sig")
    assert f"{today},INR,117.50,200.00,-100.00,30.00,20.00,0.00,0.00,267.50" in text
    assert f"{today},CHP,1000.00,0.00,0.00,0.00,0.00,0.00,0.00,1000.00" in text
    assert csv["Content-Disposition"].endswith(
        f'promotions-spend-{today - timedelta(days=13)}-{today}.csv"'
    )
    assert "The end comes before the start." in refused.content.decode()


def test_staff_without_a_finance_role_may_not_read_it(db):
    page = staff_client(staff("nobody")).get("/admin/tournaments/tournament/promotions/")

    assert page.status_code == 403


@pytest.mark.parametrize(
    ("query", "error"),
    [({"start": "2026-02-30"}, "Enter a valid date."), ({"end": "x"}, "Enter a valid date.")],
)
def test_a_bad_period_is_refused_on_its_form(db, query, error):
    tab = staff_client(staff("viewer-1", "finance viewer"))

    page = tab.get("/admin/tournaments/tournament/promotions/", query)

    assert page.status_code == 200
    html = page.content.decode()
    assert error in html and 'id="spend-totals"' not in html
