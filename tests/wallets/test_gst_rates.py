"""GST rates by date (docs/money-and-tax.md): the dated table, the rate a deposit is taxed at (the
one in force at the instant it is recorded, in IST), each deposit keeping its own rate, finance
adding a future rate through maker-checker, and history the database will not let anyone edit.

The clock is frozen by replacing the ledger's clock the rate is read from
(`wallets.tax.gst_rates.ledger_now`); deposits go through real HTTP to a live server."""

import re
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from django.db import DatabaseError, connection, transaction
from django.urls import reverse

from rummy_ledger.api.keys import api_client_create
from rummy_ledger.dev.demo.simulator import Http
from tests.builders import chain_caught_up, staff, staff_client
from tests.wallets.invariants import ledger_violations
from wallets import selectors
from wallets.errors import ProposalInvalid, SelfApproval
from wallets.models import DepositGst, GstRate, GstRateProposal, ProposalStatus
from wallets.reconciliation import reconcile_run
from wallets.roles import APPROVER, OPERATOR
from wallets.services.proposals import proposal_decide
from wallets.tax import formulas, gst_rates

IST = formulas.INDIA
LAST_SECOND_AT_28 = datetime(2025, 9, 21, 23, 59, 59, tzinfo=IST)


@pytest.fixture
def clock(monkeypatch):
    """Freeze the ledger's clock the GST rate is read from: `clock(moment)`."""

    def freeze(moment: datetime) -> None:
        monkeypatch.setattr(gst_rates, "ledger_now", lambda: moment)

    return freeze


def sql(statement: str, params=None) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


@pytest.mark.django_db
def test_the_rates_in_force_so_far_are_seeded_with_their_sources():
    rates = [(r.effective_from, r.rate_percent) for r in GstRate.objects.order_by("pk")]
    assert rates == [(date(2023, 10, 1), Decimal("28.00")), (date(2025, 9, 22), Decimal("40.00"))]
    assert all("GST Council" in r.source for r in GstRate.objects.all())
    at = gst_rates.gst_rate_at
    assert at(datetime(2023, 9, 30, 23, 59, tzinfo=IST)) == Decimal("0.00")
    assert at(datetime(2023, 10, 1, tzinfo=IST)) == Decimal("28.00")
    assert at(LAST_SECOND_AT_28) == Decimal("28.00")
    assert at(LAST_SECOND_AT_28 + timedelta(seconds=1)) == Decimal("40.00")


@pytest.mark.django_db(transaction=True)
def test_deposits_a_second_apart_at_midnight_ist_are_taxed_at_28_and_40(live_server, clock):
    _, key = api_client_create(name="gateway", scopes=["payments"])
    http = Http(live_server.url, key)

    # given: the last second of 21 September 2025 in India (18:29:59 UTC)
    clock(LAST_SECOND_AT_28)
    before = http.post("players/b1/deposits", {"amount": "1000.00", "reference": "gw-b1"})
    # when: a second later, 22 September has begun in India (it is still the 21st in UTC)
    clock(LAST_SECOND_AT_28 + timedelta(seconds=1))
    after = http.post("players/b2/deposits", {"amount": "1000.00", "reference": "gw-b2"})
    again = http.post("players/b1/deposits", {"amount": "1000.00", "reference": "gw-b1"})

    # then
    assert (before["gst_rate"], before["gst"], before["credited"]) == ("28.00", "218.75", "781.25")
    assert (after["gst_rate"], after["gst"], after["credited"]) == ("40.00", "285.71", "714.29")
    # a repeat keeps the rate the deposit was recorded at, whatever the rate is now
    assert (again["gst_rate"], again["gst"], again["transfer_id"]) == (
        "28.00",
        "218.75",
        before["transfer_id"],
    )
    recorded = {d.transfer_id: (d.rate_percent, d.gst) for d in DepositGst.objects.all()}
    assert recorded == {
        before["transfer_id"]: (Decimal("28.00"), Decimal("218.75")),
        after["transfer_id"]: (Decimal("40.00"), Decimal("285.71")),
    }
    assert reconcile_run(trigger="command").status == "clean"
    assert ledger_violations() == []


@pytest.mark.django_db(transaction=True)
def test_the_gst_report_and_reconciliation_are_per_rate(live_server, clock):
    _, key = api_client_create(name="gateway", scopes=["payments"])
    http = Http(live_server.url, key)
    clock(LAST_SECOND_AT_28)
    http.post("players/r1/deposits", {"amount": "1000.00", "reference": "gw-r1"})
    http.post("players/r2/deposits", {"amount": "100.00", "reference": "gw-r2"})
    clock(LAST_SECOND_AT_28 + timedelta(seconds=1))
    http.post("players/r3/deposits", {"amount": "1000.00", "reference": "gw-r3"})
    # the transfers are stamped with the real time: put them on the days their rates say
    sql("SET session_replication_role = replica")
    sql(
        "UPDATE wallets_transfer t SET created_at = %s FROM wallets_depositgst d "
        "WHERE d.transfer_id = t.id AND d.rate_percent = 28",
        [LAST_SECOND_AT_28],
    )
    sql(
        "UPDATE wallets_transfer t SET created_at = %s FROM wallets_depositgst d "
        "WHERE d.transfer_id = t.id AND d.rate_percent = 40",
        [LAST_SECOND_AT_28 + timedelta(seconds=1)],
    )
    sql("RESET session_replication_role")
    chain_caught_up()  # the ledger's chain, as its job would have written it on those days

    start, end = formulas.month_span(2025, 9)
    lines = [
        (m.month, m.rate, m.deposits, m.amount, m.gst, m.net)
        for m in selectors.gst_months(start=start, end=end)
    ]

    D = Decimal
    assert lines == [
        (date(2025, 9, 1), D("28.00"), 2, D("1100.00"), D("240.63"), D("859.37")),
        (date(2025, 9, 1), D("40.00"), 1, D("1000.00"), D("285.71"), D("714.29")),
    ]
    report = reconcile_run(trigger="command")
    assert report.status == "clean", list(report.discrepancies.values())

    # a deposit's record of its GST that disagrees with the ledger is found, per rate
    sql("SET session_replication_role = replica")
    sql("UPDATE wallets_depositgst SET gst = gst + 0.01 WHERE rate_percent = 40")
    sql("RESET session_replication_role")
    report = reconcile_run(trigger="command")
    found = {d.kind: d for d in report.discrepancies.all()}
    assert sorted(found) == ["gst_deposit_mismatch", "gst_payable_mismatch"]
    assert found["gst_deposit_mismatch"].details["rate"] == "40.00"
    assert found["gst_payable_mismatch"].details["per_rate"] == {
        "28.00": "240.63",
        "40.00": "285.72",
    }


@pytest.fixture
def finance(db):
    return staff("gst-op", OPERATOR), staff("gst-ap", APPROVER)


def propose(operator, day: date, rate: str = "45.00") -> GstRateProposal:
    return gst_rates.gst_rate_propose(
        proposed_by=operator,
        effective_from=day,
        rate_percent=Decimal(rate),
        source="GST Council, 60th meeting",
        reason="notified rate change",
    )


def decide(proposal, user, approve: bool = True):
    return proposal_decide(
        model=GstRateProposal, proposal_id=proposal.pk, decided_by=user, approve=approve
    )


def test_finance_adds_a_future_rate_through_maker_checker(finance, clock):
    operator, approver = finance
    clock(datetime(2027, 1, 10, 12, 0, tzinfo=IST))
    both = staff("gst-both", OPERATOR, APPROVER)
    with pytest.raises(SelfApproval):
        decide(propose(both, date(2027, 3, 1)), both)
    proposal = propose(operator, date(2027, 2, 1))

    assert gst_rates.gst_rate_at(datetime(2027, 2, 1, tzinfo=IST)) == Decimal("40.00")
    decide(proposal, approver)

    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.APPROVED and proposal.rate is not None
    at = gst_rates.gst_rate_at
    assert at(datetime(2027, 1, 31, 23, 59, 59, tzinfo=IST)) == Decimal("40.00")
    assert at(datetime(2027, 2, 1, tzinfo=IST)) == Decimal("45.00")
    clock(datetime(2027, 2, 1, 0, 0, tzinfo=IST))
    assert gst_rates.gst_rate_now() == Decimal("45.00")


def test_a_rate_approved_on_or_after_its_first_day_is_refused(finance, clock):
    operator, approver = finance
    clock(datetime(2027, 1, 31, 12, 0, tzinfo=IST))
    proposal = propose(operator, date(2027, 2, 1))

    clock(datetime(2027, 2, 1, 0, 0, 1, tzinfo=IST))  # its first day has begun
    with pytest.raises(ProposalInvalid, match="would apply to deposits already recorded"):
        decide(proposal, approver)

    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.PROPOSED and proposal.rate is None
    assert not GstRate.objects.filter(effective_from=date(2027, 2, 1)).exists()
    decide(proposal, approver, approve=False)  # it can still be rejected


@pytest.mark.parametrize(
    ("day", "rate", "message"),
    [
        (date(2025, 9, 22), "45.00", "would apply to deposits already recorded"),
        (date(2027, 1, 10), "45.00", "would apply to deposits already recorded"),  # today
        (date(2027, 2, 1), "100.00", "a GST rate is a percentage"),
        (date(2027, 2, 1), "12.345", "a GST rate is a percentage"),
    ],
)
def test_a_rate_for_today_or_the_past_or_out_of_range_is_not_proposed(
    finance, clock, day, rate, message
):
    clock(datetime(2027, 1, 10, 12, 0, tzinfo=IST))
    with pytest.raises(ProposalInvalid, match=message):
        propose(finance[0], day, rate)
    assert not GstRateProposal.objects.exists()


@pytest.mark.parametrize(("rate", "field"), [("100.00", "rate_percent"), ("99.99", None)])
def test_the_admin_form_says_the_rule_not_the_constraint(finance, clock, rate, field):
    clock(datetime(2027, 1, 10, 12, 0, tzinfo=IST))
    client = staff_client(finance[0])
    form = {"effective_from": "2027-01-10" if field is None else "2027-02-01",
            "rate_percent": rate, "source": "GST Council", "reason": "notified"}  # fmt: skip

    page = client.post(reverse("admin:wallets_gstrateproposal_add"), form)

    errors = page.context["adminform"].form.errors
    said = " ".join(str(e) for messages in errors.values() for e in messages)
    assert errors and "onstraint" not in said and "rate_range" not in said, said
    at_fault = field or "effective_from"
    assert list(errors) == [at_fault], errors
    assert not GstRateProposal.objects.exists()


def test_the_database_refuses_to_edit_remove_or_backdate_a_rate(db):
    in_force = GstRate.objects.get(effective_from=date(2025, 9, 22))
    statements = [
        ("UPDATE wallets_gstrate SET rate_percent = 18 WHERE id = %s", [in_force.pk]),
        ("DELETE FROM wallets_gstrate WHERE id = %s", [in_force.pk]),
        (
            "INSERT INTO wallets_gstrate (effective_from, rate_percent, source, created_at) "
            "VALUES (%s, 18, 'backdated', now())",
            [date(2025, 10, 1)],
        ),
    ]
    for statement, params in statements:
        with pytest.raises(DatabaseError, match="GST rate"), transaction.atomic():
            sql(statement, params)
    # a future rate is not history yet: the database lets an approval add it
    future = date.today() + timedelta(days=400)
    sql(
        "INSERT INTO wallets_gstrate (effective_from, rate_percent, source, created_at) "
        "VALUES (%s, 18, 'future', now())",
        [future],
    )
    assert GstRate.objects.count() == 3
    assert GstRate.objects.get(effective_from=date(2025, 9, 22)).rate_percent == Decimal("40.00")


def test_a_deposits_record_of_its_rate_is_append_only(db):
    from tests.wallets.payments import deposited

    deposited("a1", "100.00")
    record = DepositGst.objects.get()
    for statement in (
        "UPDATE wallets_depositgst SET rate_percent = 28 WHERE transfer_id = %s",
        "DELETE FROM wallets_depositgst WHERE transfer_id = %s",
    ):
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
            sql(statement, [record.transfer_id])
    assert DepositGst.objects.get().rate_percent == Decimal("40.00")


def test_the_docs_deposit_figures_are_those_of_the_rate_in_force(db):
    readme = (Path(__file__).resolve().parents[2] / "docs" / "money-and-tax.md").read_text()
    found = re.search(r"at (\d+) % ₹([\d,]+) → ₹([\d.]+) credited \+ ₹([\d.]+) GST", readme)
    rate, amount, credited, gst = found.groups()
    split = formulas.gst_split(Decimal(amount.replace(",", "")), rate_percent=Decimal(rate))

    assert Decimal(rate) == gst_rates.gst_rate_now()
    assert (split.credited, split.gst) == (Decimal(credited), Decimal(gst))
