"""The feed (`GET /api/v1/events`, rummy_ledger/events/feed.py) over real PostgreSQL
transactions: commit order with no miss and no repeat when transactions commit out of id order,
concurrent writers, the cursor's rules, retention."""

from __future__ import annotations

import random
import threading
import time
from datetime import timedelta
from typing import NamedTuple

import pytest
from django.db import connection, connections, transaction
from django.utils import timezone

from rummy_ledger.events.event_types import EventType
from rummy_ledger.events.feed import events_purge
from rummy_ledger.events.models import Event
from rummy_ledger.events.record import Happened, events_record
from rummy_ledger.events.renderers import Renderer, renderer_register
from tests.builders import make_api
from tests.concurrency import run_in_threads
from tests.tournaments.worker import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

# The feed's tests record `game.cancelled` events about made-up objects: rendered as their pk.
TEST_TYPE = EventType.GAME_CANCELLED


class Made(NamedTuple):
    pk: int


@pytest.fixture
def fake_renderer(monkeypatch):
    from rummy_ledger.events import renderers

    def render(subjects):
        return {s.pk: {"n": s.pk} for s in subjects}

    monkeypatch.setitem(renderers._RENDERERS, TEST_TYPE, render)


@pytest.fixture
def games(db, fake_renderer):
    return make_api("games", name="reader")


def record(client_id: int, n: int) -> None:
    events_record([Happened(TEST_TYPE, client_id, Made(n))])


def caught_up() -> bool:
    """No transaction older than the last event's is running on the server (any database's: a
    test of another process may hold one): the feed returns every event written so far."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(max(txid::text::bigint), 0) "
            "< pg_snapshot_xmin(pg_current_snapshot())::text::bigint FROM events_event"
        )
        return cursor.fetchone()[0]


def read_all(api, after: str | None = None, limit: int = 500) -> tuple[list[int], str]:
    """Every event readable now from `after`, page by page: their `n`s and the last `next`."""
    seen: list[int] = []
    while True:
        query = {"limit": limit, **({"after": after} if after else {})}
        page = api.get("/api/v1/events", query).json()
        seen += [e["data"]["n"] for e in page["events"]]
        if page["next"] == after or not page["events"]:
            return seen, page["next"]
        after = page["next"]


def test_a_transaction_that_commits_after_a_later_one_is_read_not_skipped(games):
    api, client = games
    first_in = threading.Event()
    later_committed = threading.Event()

    def early(_):  # takes the smaller id, commits last
        with transaction.atomic():
            record(client.pk, 1)
            first_in.set()
            later_committed.wait(30)
            time.sleep(0.2)  # the reader below reads while this one is still open
            seen.append(read_all(api)[0])

    def late(_):  # takes the larger id, commits first
        first_in.wait(30)
        with transaction.atomic():
            record(client.pk, 2)
        later_committed.set()

    seen: list = []
    results = run_in_threads(lambda n: (early, late)[n](n), 2)

    assert results == [None, None]
    ids = list(Event.objects.order_by("id").values_list("data__n", flat=True))
    assert ids == [1, 2]  # 1 took the smaller id ...
    assert wait_until(caught_up, 20)
    events, cursor = read_all(api)
    assert events == [1, 2]  # ... and is read, first (its transaction began first)
    assert read_all(api, cursor) == ([], cursor)  # nothing again; `next` stays


def test_the_reader_waits_for_the_oldest_open_transaction(games):
    api, client = games
    record_in_autocommit = transaction.atomic
    with record_in_autocommit():
        record(client.pk, 1)
    # a second connection holds a transaction open with an event in it
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("BEGIN")
            cursor.execute(
                "INSERT INTO events_event (client_id, type, data) VALUES (%s, %s, '{\"n\": 2}')",
                [client.pk, str(TEST_TYPE)],
            )
        with transaction.atomic():
            record(client.pk, 3)  # committed, but after the open one began

        before, cursor_before = read_all(api)
        with other.cursor() as cursor:
            cursor.execute("COMMIT")
        assert wait_until(caught_up, 20)
        after, cursor_after = read_all(api, cursor_before)
    finally:
        other.close()

    # 3 is committed, yet not passed while 2's transaction is open (nor 1, while a transaction
    # of another test on the server that began before it runs)
    assert before in ([1], [])
    assert before + after == [1, 2, 3]
    assert cursor_after != cursor_before


def test_concurrent_writers_neither_missed_nor_repeated(games):
    api, client = games
    writers, each = 4, 25
    done = threading.Event()
    read: list[int] = []

    def write(n: int) -> None:
        for i in range(each):
            with transaction.atomic():
                record(client.pk, n * 1000 + i)
                time.sleep(random.random() * 0.01)  # commits interleave out of id order

    def reader() -> None:
        after = None
        try:
            while not done.is_set():
                events, after = read_all(api, after, limit=7)
                read.extend(events)
                time.sleep(0.005)
            assert wait_until(caught_up, 20)
            events, after = read_all(api, after, limit=7)
            read.extend(events)
        finally:
            connection.close()

    watcher = threading.Thread(target=reader)
    watcher.start()
    results = run_in_threads(write, writers)
    done.set()
    watcher.join(60)

    assert results == [None] * writers
    assert len(read) == len(set(read)) == writers * each  # each once
    assert sorted(read) == sorted(n * 1000 + i for n in range(writers) for i in range(each))


def test_each_client_reads_its_own_events_only(games):
    api, client = games
    other_api, other = make_api("payments", name="other")
    with transaction.atomic():
        record(client.pk, 1)
        record(other.pk, 2)
    assert wait_until(caught_up, 20)

    assert read_all(api)[0] == [1]
    assert read_all(other_api)[0] == [2]
    stranger, _ = make_api("games", name="stranger")
    assert stranger.get("/api/v1/events").json() == {"events": [], "next": "0-0"}


def test_pages_limit_and_next(games):
    api, client = games
    with transaction.atomic():
        for n in range(1, 106):
            record(client.pk, n)
    assert wait_until(caught_up, 20)

    page = api.get("/api/v1/events").json()
    assert len(page["events"]) == 100  # the default limit
    assert set(page["events"][0]) == {"id", "type", "created_at", "data"}
    rest = api.get("/api/v1/events", {"after": page["next"], "limit": 500}).json()
    assert [e["data"]["n"] for e in rest["events"]] == list(range(101, 106))
    empty = api.get("/api/v1/events", {"after": rest["next"]}).json()
    assert empty == {"events": [], "next": rest["next"]}  # the same cursor: nothing new


@pytest.mark.parametrize(
    "query",
    [
        {"after": "12"},
        {"after": "x-1"},
        {"after": "1-2-3"},
        {"after": "99999999999999999999-1"},
        {"limit": "0"},
        {"limit": "501"},
        {"limit": "ten"},
        {"cursor": "1-1"},
    ],
)
def test_a_bad_query_is_400(games, query):
    api, _ = games

    response = api.get("/api/v1/events", query)

    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] in ("invalid", "bad_request")


def test_a_cursor_older_than_the_retention_is_410(games, settings):
    api, client = games
    with transaction.atomic():
        record(client.pk, 1)
        record(client.pk, 2)
    assert wait_until(caught_up, 20)
    _, start = read_all(api)
    with transaction.atomic():
        record(client.pk, 3)
    assert wait_until(caught_up, 20)
    first_page = api.get("/api/v1/events", {"limit": 1}).json()
    old = timezone.now() - timedelta(days=settings.EVENTS_RETENTION_DAYS + 1)
    first_two = [event.pk for event in Event.objects.all() if event.data["n"] in (1, 2)]
    Event.objects.filter(pk__in=first_two).update(created_at=old)

    assert events_purge() == 2

    gone = api.get("/api/v1/events", {"after": first_page["next"]})
    assert gone.status_code == 410
    assert gone.json()["error"]["code"] == "cursor_expired"
    assert read_all(api, start)[0] == [3]  # a cursor at the purge's end misses nothing
    assert read_all(api)[0] == [3]  # from the start: what is kept


def test_events_need_a_key(db):
    from rest_framework.test import APIClient

    assert APIClient().get("/api/v1/events").status_code == 401


def test_renderers_are_one_per_type():
    from django.core.exceptions import ImproperlyConfigured

    with pytest.raises(ImproperlyConfigured):
        renderer_register(Renderer((EventType.DEAL_SETTLED,), lambda pks: {}))
