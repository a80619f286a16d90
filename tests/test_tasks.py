"""`rummy_ledger.tasks.AfterCommitTask`: a task is sent once the caller commits; a wake is sent
once, without retry, and gathered wakes are due at the same moment for every process, none sent
while this process's last one is still to run; a wake the broker refused holds back the next
ones until beat's next wake."""

from __future__ import annotations

import time

import pytest
from celery import Task
from django.db import transaction

from rummy_ledger.tasks import WAKE_DUE_MARGIN
from tournaments.tasks import settle_waiting


@pytest.fixture
def sent(monkeypatch):
    """The options of each message handed to Celery (the broker's side is tests/ops')."""
    made = []
    monkeypatch.setattr(
        Task, "apply_async", lambda self, args, kwargs, **options: made.append(options) or options
    )
    return made


@pytest.mark.django_db(transaction=True)
def test_a_wake_is_sent_once_the_caller_commits_without_retry(sent):
    with transaction.atomic():
        settle_waiting.wake()
        assert sent == []  # not before the commit
    assert [options["retry"] for options in sent] == [False]


@pytest.mark.django_db(transaction=True)
def test_a_wake_in_a_transaction_rolled_back_is_never_sent(sent):
    with pytest.raises(RuntimeError), transaction.atomic():
        settle_waiting.wake()
        raise RuntimeError("rolled back")
    assert sent == []


def test_gathered_wakes_are_due_together_and_sent_once_while_one_is_to_run(sent):
    gather = 0.4
    # given a first wake: due at the next multiple of `gather` seconds of the clock
    settle_waiting.wake(gather=gather)
    [first] = sent
    due = time.time() + first["countdown"]
    assert WAKE_DUE_MARGIN <= first["countdown"] <= gather + WAKE_DUE_MARGIN
    assert abs(due / gather - round(due / gather)) < 0.01
    # when more wakes come before it runs: none is sent (that run finds what they commit)
    while time.time() < due - WAKE_DUE_MARGIN - 0.01:
        settle_waiting.wake(gather=gather)
    assert len(sent) == 1
    # when one comes once it is due: it is sent, due at the next multiple
    time.sleep(max(0.0, due - time.time()) + 0.01)
    settle_waiting.wake(gather=gather)
    assert len(sent) == 2 and WAKE_DUE_MARGIN <= sent[1]["countdown"] <= gather + WAKE_DUE_MARGIN
    assert time.time() + sent[1]["countdown"] > due + gather / 2  # the next one, not the same


def test_eager_wakes_are_never_held_back(sent, eager):
    settle_waiting.wake(gather=10)
    settle_waiting.wake(gather=10)
    assert len(sent) == 2


def test_a_wake_the_broker_refused_holds_back_the_next_ones_until_beats(monkeypatch, settings):
    refused = []

    def broker_down(self, args, kwargs, **options):
        refused.append(options)
        raise OSError("connection refused")

    monkeypatch.setattr(Task, "apply_async", broker_down)
    settings.SETTLEMENT_WAKE_SECONDS = 0.3
    settle_waiting.wake()
    settle_waiting.wake()  # held back: beat wakes the task within SETTLEMENT_WAKE_SECONDS
    assert len(refused) == 1
    time.sleep(0.3)
    settle_waiting.wake()
    assert len(refused) == 2
