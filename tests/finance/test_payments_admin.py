"""The withdrawal queue in admin (an operator reviews, another person approves), and the tax
reports finance files, on screen and as CSV."""

import csv
import io
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from tests.builders import make_api, staff, staff_client
from tests.wallets.payments import Gateway, deposited, verified, won
from wallets.models import Withdrawal, WithdrawalReview
from wallets.roles import APPROVER, OPERATOR
from wallets.tax import formulas

pytestmark = pytest.mark.django_db

FY = formulas.financial_year_of(timezone.now())


@pytest.fixture
def queue(db):
    """p1: 1,000 credited, 3,000 won, a withdrawal of 2,500 waiting (net winnings 1,500)."""
    gateway = Gateway(make_api("payments", name="gateway")[0])
    deposited("p1", "1000.00")
    verified("p1", "ABCDE1234F")
    won("p1", "3000.00")
    body = gateway.withdraw("p1", "2500.00").json()
    assert (body["status"], body["tds"]) == ("requested", "450.00")
    return gateway, Withdrawal.objects.get(pk=body["withdrawal_id"])


def review(client, withdrawal, note="bank account and PAN checked"):
    url = reverse("admin:wallets_withdrawal_review", args=[withdrawal.pk])
    return client.post(url, {"note": note}, follow=True)


def test_the_queue_shows_kyc_and_the_tax_position(queue, viewer):
    _, withdrawal = queue
    page = staff_client(viewer).get(
        reverse("admin:wallets_withdrawal_changelist") + "?status=requested"
    )
    text = page.content.decode()
    assert page.status_code == 200
    assert "verified ABCDE1234F" in text
    # the list's column is narrow (1366 px), the whole position is on the page
    assert f"FY {FY.label}: net winnings taxed ₹1,500.00, TDS ₹450.00" in text
    detail = staff_client(viewer).get(
        reverse("admin:wallets_withdrawal_change", args=[withdrawal.pk])
    )
    assert (
        f"FY {FY.label}: opening ₹0.00, deposits ₹1,000.00, withdrawn ₹2,500.00, "
        "net winnings taxed ₹1,500.00, TDS ₹450.00"
    ) in detail.content.decode()
    assert b'id="review-form"' not in detail.content  # viewers do not review


def test_operator_reviews_and_another_approves_in_admin(queue, operator, approver):
    gateway, withdrawal = queue
    page = staff_client(operator).get(
        reverse("admin:wallets_withdrawal_change", args=[withdrawal.pk])
    )
    assert b'id="review-form"' in page.content

    assert review(staff_client(approver), withdrawal).status_code == 403  # approvers do not review
    response = review(staff_client(operator), withdrawal)
    assert "an approver approves or rejects it now" in response.content.decode()
    again = review(staff_client(operator), withdrawal)
    assert "already reviewed" in again.content.decode()
    the_review = WithdrawalReview.objects.get(withdrawal=withdrawal)

    url = reverse("admin:wallets_withdrawalreview_changelist")
    selected = {"action": "approve", "_selected_action": [the_review.pk]}
    staff_client(operator).post(url, selected, follow=True)  # no approve action for operators
    assert Withdrawal.objects.get(pk=withdrawal.pk).status == "requested"
    response = staff_client(approver).post(url, selected, follow=True)

    assert f"#{the_review.pk} approved" in response.content.decode()
    assert Withdrawal.objects.get(pk=withdrawal.pk).status == "approved"
    assert gateway.paid(withdrawal.pk, "gw-1").json()["status"] == "paid"


def test_an_operator_who_is_also_an_approver_cannot_approve_their_review(queue):
    _, withdrawal = queue
    both = staff("both", OPERATOR, APPROVER)
    review(staff_client(both), withdrawal)
    the_review = WithdrawalReview.objects.get(withdrawal=withdrawal)

    response = staff_client(both).post(
        reverse("admin:wallets_withdrawalreview_decide", args=[the_review.pk]),
        {"decision": "approve"},
        follow=True,
    )

    assert "someone other than its proposer" in response.content.decode()
    assert Withdrawal.objects.get(pk=withdrawal.pk).status == "requested"


def test_rejecting_in_admin_returns_the_money(queue, operator, approver):
    gateway, withdrawal = queue
    review(staff_client(operator), withdrawal, "name on the bank account differs")
    the_review = WithdrawalReview.objects.get(withdrawal=withdrawal)

    staff_client(approver).post(
        reverse("admin:wallets_withdrawalreview_decide", args=[the_review.pk]),
        {"decision": "reject", "note": "ask the player for proof"},
    )

    assert Withdrawal.objects.get(pk=withdrawal.pk).status == "rejected"
    wallet = gateway.api.get("/api/v1/players/p1/wallet").json()["balances"]
    assert (wallet["winnings"]["amount"], wallet["pending"]["amount"]) == ("3000.00", "0.00")


def read_csv(response) -> list[list[str]]:
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    return list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))


def test_tax_statement_page_and_csv(queue, viewer):
    url = reverse("admin:wallets_tax_statement") + f"?player=p1&fy={FY.label}"
    page = staff_client(viewer).get(url)
    assert page.status_code == 200 and b'id="tax-position"' in page.content
    assert "₹2,500.00" in page.content.decode() and "₹450.00" in page.content.decode()

    rows = read_csv(staff_client(viewer).get(url + "&format=csv"))

    assert rows[0] == ["line", "status", "amount", "net winnings", "tds"]
    assert rows[1:3] == [["opening", "", "0.00", "", ""], ["deposits", "", "1000.00", "", ""]]
    assert rows[3][1:] == ["requested", "2500.00", "1500.00", "450.00"]
    assert rows[-1][2:] == ["2500.00", "1500.00", "450.00"]
    bad = staff_client(viewer).get(reverse("admin:wallets_tax_statement") + "?player=p1&fy=2026")
    assert "written like 2026-27" in bad.content.decode()


def test_tds_report_lists_what_was_withheld_in_the_quarter(queue, operator, approver, viewer):
    _, withdrawal = queue
    review(staff_client(operator), withdrawal)
    the_review = WithdrawalReview.objects.get(withdrawal=withdrawal)
    staff_client(approver).post(
        reverse("admin:wallets_withdrawalreview_decide", args=[the_review.pk]),
        {"decision": "approve"},
    )
    today = timezone.localdate()
    quarter = (today.month - 4) % 12 // 3 + 1
    url = reverse("admin:wallets_tds_report") + f"?fy={FY.label}&quarter={quarter}"

    page = staff_client(viewer).get(url).content.decode()
    rows = read_csv(staff_client(viewer).get(url + "&format=csv"))

    assert "Total: <strong>₹450.00</strong>" in page and "₹2,500.00" in page
    assert rows == [
        ["date", "pan", "player", "kind", "reference", "amount paid", "net winnings", "tds"],
        [today.isoformat(), "ABCDE1234F", "p1", "withdrawal", withdrawal.reference, "2500.00",
         "1500.00", "450.00"],
    ]  # fmt: skip
    other = (quarter % 4) + 1
    empty = staff_client(viewer).get(
        reverse("admin:wallets_tds_report") + f"?fy={FY.label}&quarter={other}"
    )
    assert "No TDS withheld in this quarter." in empty.content.decode()


@pytest.mark.parametrize("fy", ["9999-00", "0000-01", "1900-01", "२०२६-27", "2026-27\n"])
def test_the_reports_refuse_a_year_outside_2000_to_2098_on_the_form(db, viewer, fy):
    """`fy=9999-00` (year 10000) is refused, not a 500, on the tax statement and the TDS report."""
    client = staff_client(viewer)
    client.raise_request_exception = False
    pages = {
        "admin:wallets_tax_statement": {"player": "p1", "fy": fy},
        "admin:wallets_tds_report": {"fy": fy, "quarter": "1"},
    }
    for name, query in pages.items():
        page = client.get(reverse(name), query)
        assert page.status_code == 200, (name, page.status_code)
        assert "errorlist" in page.content.decode(), name
    for start, end in (("9999-12", "9999-12"), ("0001-01", "2026-01"), ("1900-01", "1900-02")):
        page = client.get(reverse("admin:wallets_gst_report"), {"start": start, "end": end})
        assert page.status_code == 200, (start, page.status_code)
        assert "are handled, not" in page.content.decode()


def test_gst_report_per_month_and_rate(db, viewer):
    gateway = Gateway(make_api("payments", name="gateway")[0])
    gateway.deposit("g1", "1000.00")
    gateway.deposit("g2", "100.00")
    month = timezone.localdate().strftime("%Y-%m")

    url = reverse("admin:wallets_gst_report") + f"?start={month}&end={month}"
    page = staff_client(viewer).get(url)
    rows = read_csv(staff_client(viewer).get(url + "&format=csv"))

    assert page.status_code == 200 and "₹314.28" in page.content.decode()
    assert "₹1,100.00" in page.content.decode() and "40.00%" in page.content.decode()
    assert rows == [
        ["month", "rate", "deposits", "amount", "gst", "net"],
        [month, "40.00", "2", "1100.00", "314.28", "785.72"],
    ]
    assert Decimal("285.71") + Decimal("28.57") == Decimal("314.28")
