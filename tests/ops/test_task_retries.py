"""A settle task that fails on a database error (the database restarting, a connection cut) is
retried with backoff by Celery, not left to the next sweep."""

from __future__ import annotations

from unittest import mock

import pytest
from django.db import InterfaceError, OperationalError

from tests.builders import make_api, points_game
from tournaments.games.services import settlement
from tournaments.models import Deal
from tournaments.tasks import settle_deal


@pytest.mark.parametrize(
    "error",
    [
        OperationalError("terminating connection due to administrator command"),
        InterfaceError("connection already closed"),
    ],
)
def test_a_settle_task_that_fails_on_a_database_error_is_retried(db, error):
    # given: a stored deal, and a database that fails the first attempt
    game = points_game(make_api("games")[1], "g", settle=False)
    deal = Deal.objects.get(game=game)
    real = settlement.deal_settle
    calls = []

    def flaky(*, deal_id):
        calls.append(deal_id)
        if len(calls) == 1:
            raise error
        return real(deal_id=deal_id)

    # when: the task runs (eagerly: a retry runs at once instead of after its countdown)
    with mock.patch.object(settlement, "deal_settle", flaky):
        result = settle_deal.apply(args=[deal.pk])

    # then: it was retried and the deal is settled
    assert result.successful(), result.traceback
    assert calls == [deal.pk, deal.pk]
    deal.refresh_from_db()
    assert deal.status == Deal.Status.SETTLED


def test_a_settle_task_is_not_retried_for_a_bug(db):
    game = points_game(make_api("games")[1], "g", settle=False)
    deal = Deal.objects.get(game=game)
    with mock.patch.object(settlement, "deal_settle", side_effect=ValueError("a bug")) as broken:
        result = settle_deal.apply(args=[deal.pk])
    assert result.failed() and broken.call_count == 1  # the sweep and the logs have it
