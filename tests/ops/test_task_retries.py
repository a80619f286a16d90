"""A settlement run that fails on a database error (the database restarting, a connection cut)
is retried a few times with backoff by Celery; then, or on a bug at once, it fails and beat's
next wake runs the queue again (the stored deals are the queue: nothing is lost)."""

from __future__ import annotations

from unittest import mock

import pytest
from django.db import InterfaceError, OperationalError

from tests.builders import make_api, points_game
from tournaments.games.services import settlement
from tournaments.models import Deal
from tournaments.tasks import settle_waiting


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
    real = settlement.waiting_settle
    calls = []

    def flaky():
        calls.append(True)
        if len(calls) == 1:
            raise error
        return real()

    # when: the task runs (eagerly: a retry runs at once instead of after its countdown)
    with mock.patch.object(settlement, "waiting_settle", flaky):
        result = settle_waiting.apply()

    # then: it was retried and the deal is settled
    assert result.successful(), result.traceback
    assert len(calls) == 2
    deal.refresh_from_db()
    assert deal.status == Deal.Status.SETTLED


def test_a_settle_task_gives_up_after_a_few_database_errors(db):
    error = OperationalError("the database is away")
    with mock.patch.object(settlement, "waiting_settle", side_effect=error) as away:
        result = settle_waiting.apply()
    assert result.failed() and away.call_count == 4  # three retries: then beat's next wake


def test_a_settle_task_is_not_retried_for_a_bug(db):
    with mock.patch.object(settlement, "waiting_settle", side_effect=ValueError("a bug")) as broken:
        result = settle_waiting.apply()
    assert result.failed() and broken.call_count == 1  # the logs have it; beat wakes it again
