"""The home page's lines (`wallets.admin.dashboard`): what each role sees, and what they cost."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from djmoney.money import Money

from tests.builders import funded_player
from wallets.admin import dashboard
from wallets.models import CASH, Adjustment

pytestmark = pytest.mark.django_db


def shown(user) -> dict[str, dashboard.Line]:
    return {line.label: line for _, lines in dashboard.dashboard_for(user) for line in lines}


def test_a_long_queue_is_counted_only_up_to_its_cap(operator, approver):
    accounts = funded_player("p1", "100.00")
    player = accounts["deposit"].player
    Adjustment.objects.bulk_create(
        Adjustment(
            player=player,
            bucket="deposit",
            direction="credit",
            amount=Money(1, CASH),
            reason="x",
            proposed_by=operator,
        )
        for _ in range(dashboard.CAP + 1)
    )

    line = shown(approver)["adjustments to approve"]

    assert (line.value, line.alert, line.yours) == ("more than 999", True, True)
    assert line.url == "/admin/wallets/adjustment/?status__exact=proposed"
    assert shown(operator)["adjustments to approve"].yours is False


def test_the_home_page_costs_the_same_queries_however_much_waits(superuser, operator):
    def queries() -> int:
        user = User.objects.get(pk=superuser.pk)  # a fresh permission cache each time
        with CaptureQueriesContext(connection) as captured:
            dashboard.dashboard_for(user)
        return len(captured)

    player = funded_player("p1", "100.00")["deposit"].player
    before = queries()
    Adjustment.objects.bulk_create(
        Adjustment(player=player, bucket="deposit", direction="credit", amount=Money(1, CASH),
                   reason="x", proposed_by=operator)
        for _ in range(50)
    )  # fmt: skip

    assert queries() == before <= 12


def test_a_viewer_without_a_list_sees_no_line_of_it(db):
    nobody = User.objects.create_user(username="nobody", is_staff=True)

    assert dashboard.dashboard_for(nobody) == [
        (dashboard.TODAY, [dashboard.Line("real-money mode", "on")])
    ]
