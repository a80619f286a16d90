"""The one audit list: sign-ins and their failures, proposals, approvals, rejections, exports and
key changes each write a row; the rows cannot be changed or deleted (the database refuses);
the list filters by person, kind and date, and its CSV holds the rows the filters show, no cell
a formula."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
from django.db import DatabaseError, transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from djmoney.money import Money

from rummy_ledger.errors import DomainError
from rummy_ledger.staff.audit import audit_record
from rummy_ledger.staff.models import AuditEvent, AuditKind
from tests.builders import funded_player, staff, staff_client
from wallets.models import Adjustment, Player
from wallets.roles import APPROVER, OPERATOR, VIEWER
from wallets.services.adjustments import adjustment_propose
from wallets.services.proposals import proposal_decide

pytestmark = pytest.mark.django_db

LIST = "/admin/staff/auditevent/"


def kinds(actor: str) -> list[str]:
    return list(
        AuditEvent.objects.filter(actor=actor).order_by("id").values_list("kind", flat=True)
    )


def csv_rows(response) -> list[list[str]]:
    text = response.content.decode("utf-8")
    assert text.startswith("\ufeff") and response["Content-Type"] == "text/csv; charset=utf-8"
    return list(csv.reader(io.StringIO(text[1:])))


def test_sign_ins_and_failures_are_listed():
    user = staff("vera", VIEWER)
    user.set_password("right-one-42")
    user.save()
    client = Client(REMOTE_ADDR="10.1.2.3")
    client.post("/admin/login/", {"username": "vera", "password": "wrong"})
    client.post("/admin/login/", {"username": "vera", "password": "right-one-42"})
    client.post("/admin/logout/")
    assert kinds("vera") == [AuditKind.SIGN_IN_FAILED, AuditKind.SIGN_IN, AuditKind.SIGN_OUT]
    assert set(AuditEvent.objects.values_list("address", flat=True)) == {"10.1.2.3"}


def test_proposals_approvals_and_rejections_are_listed():
    operator, approver = staff("olga", OPERATOR), staff("arun", APPROVER)
    funded_player("p1", "100.00")
    player = Player.objects.get(external_id="p1")
    made = [
        adjustment_propose(
            proposed_by=operator,
            player=player,
            bucket="deposit",
            direction="credit",
            amount=Money("5.00", "INR"),
            reason=f"goodwill {n}",
        )
        for n in (1, 2)
    ]
    proposal_decide(model=Adjustment, proposal_id=made[0].pk, decided_by=approver, approve=True)
    proposal_decide(
        model=Adjustment, proposal_id=made[1].pk, decided_by=approver, approve=False, note="no"
    )
    assert kinds("olga") == [AuditKind.PROPOSAL, AuditKind.PROPOSAL]
    assert kinds("arun") == [AuditKind.APPROVAL, AuditKind.REJECTION]
    rejection = AuditEvent.objects.get(kind=AuditKind.REJECTION)
    assert (rejection.subject, rejection.detail) == (f"adjustment #{made[1].pk}", "no")


def test_a_refused_proposal_leaves_no_audit_row():
    operator = staff("olga", OPERATOR)
    funded_player("p1", "1.00")
    with pytest.raises(DomainError):
        adjustment_propose(
            proposed_by=operator,
            player=Player.objects.get(external_id="p1"),
            bucket="deposit",
            direction="debit",
            amount=Money("1000000.00", "INR"),
            reason="more than it holds",
        )
    assert not AuditEvent.objects.filter(kind=AuditKind.PROPOSAL).exists()


def test_key_changes_and_exports_are_listed():
    root = staff_client(staff("root", superuser=True))
    add = root.post(reverse("admin:api_apiclient_add"), {"name": "gw", "scopes": ["payments"]})
    assert add.status_code == 200  # the page that shows the key once
    created = AuditEvent.objects.get(kind=AuditKind.KEY_CHANGE)
    assert created.actor == "root" and created.subject == "API client gw"
    assert created.detail.startswith("created with key ")

    download = root.get(reverse("admin:staff_auditevent_csv"))
    assert download.status_code == 200
    export = AuditEvent.objects.get(kind=AuditKind.EXPORT)
    assert (export.actor, export.subject) == ("root", "staff-audit.csv")


def test_the_list_refuses_to_be_rewritten():
    event = audit_record(AuditKind.SIGN_IN, actor="someone")
    for change in (
        lambda: AuditEvent.objects.filter(pk=event.pk).update(actor="someone else"),
        lambda: AuditEvent.objects.filter(pk=event.pk).delete(),
    ):
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
            change()
    assert AuditEvent.objects.get().actor == "someone"


def test_the_list_filters_by_person_kind_and_date_and_its_csv_follows():
    audit_record(AuditKind.SIGN_IN_FAILED, actor="=cmd|' /C calc'!A0")
    audit_record(AuditKind.EXPORT, actor="ravi", subject="statement.csv")
    viewer = staff_client(staff("finance-viewer", VIEWER))
    page = viewer.get(LIST, {"actor": "ravi"})
    assert page.status_code == 200
    results = page.content.decode().split('id="result_list"')[1].split("</table>")[0]
    assert "statement.csv" in results and "calc" not in results

    rows = csv_rows(viewer.get(reverse("admin:staff_auditevent_csv"), {"kind": "sign_in_failed"}))
    assert rows[0] == ["time (UTC)", "kind", "person", "subject", "detail", "address"]
    assert [row[1:3] for row in rows[1:]] == [["sign_in_failed", "'=cmd|' /C calc'!A0"]]

    # as the list's own date links give it: the local midnight, with its offset
    tomorrow = str(
        timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
    )
    later = viewer.get(reverse("admin:staff_auditevent_csv"), {"at__gte": tomorrow})
    assert csv_rows(later)[1:] == []


def test_nobody_adds_changes_or_deletes_a_row_in_admin():
    event = audit_record(AuditKind.SIGN_IN, actor="someone")
    root = staff_client(staff("root", superuser=True))
    assert root.get(f"{LIST}add/").status_code == 403
    assert root.post(f"{LIST}{event.pk}/delete/", {"post": "yes"}).status_code == 403
    page = root.get(f"{LIST}{event.pk}/change/")
    assert page.status_code == 200 and 'name="_save"' not in page.content.decode()
