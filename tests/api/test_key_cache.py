"""Authentication by key on a warm process costs no query, and a key revoked,
deactivated or given other scopes elsewhere (another node, a shell: no signal reaches this
process) stops working within a second, over real HTTP."""

from __future__ import annotations

import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from rummy_ledger.api.models import ApiClient
from tests.builders import HttpApi, make_api

TABLE = ApiClient._meta.db_table


def _key_queries(api) -> tuple[int, list[str]]:
    with CaptureQueriesContext(connection) as queries:
        status = api.get("/api/v1/templates").status_code
    return status, [q["sql"] for q in queries if TABLE in q["sql"]]


@pytest.mark.django_db
def test_an_authenticated_get_on_a_warm_process_reads_no_key():
    api, _ = make_api("games")

    cold = _key_queries(api)
    warm = _key_queries(api)

    assert cold[0] == warm[0] == 200
    # the first request proves the key against its row and writes the key's last use (at most
    # once a minute); the next reads and writes nothing of the key
    assert [q.split()[0] for q in cold[1]] == ["SELECT", "UPDATE"]
    assert warm[1] == []


@pytest.mark.django_db
def test_a_client_saved_in_this_process_is_read_again_at_once():
    api, client = make_api("games")
    assert api.get("/api/v1/templates").status_code == 200

    client.is_active = False
    client.save()  # the admin's way: this process forgets what it proved

    assert api.get("/api/v1/templates").status_code == 401


@pytest.mark.django_db(transaction=True)
def test_a_key_revoked_elsewhere_stops_working_within_a_second(live_server):
    revoked = HttpApi(live_server.url, "games", name="revoked")
    narrowed = HttpApi(live_server.url, "games", name="narrowed")
    for server in (revoked, narrowed):
        assert server.send("GET", "templates").status_code == 200  # proved: the key is remembered

    # as another node's admin or a shell would: an UPDATE, no signal in this process
    ApiClient.objects.filter(pk=revoked.client.pk).update(is_active=False)
    ApiClient.objects.filter(pk=narrowed.client.pk).update(scopes=["payments"])
    time.sleep(1.0)  # the promise: a second at most

    assert revoked.send("GET", "templates").status_code == 401
    assert narrowed.send("GET", "templates").status_code == 403


@pytest.mark.django_db(transaction=True)
def test_a_snapshot_read_can_be_the_first_statement_of_a_request():
    api, _ = make_api("games")
    api.raise_request_exception = False
    assert api.get("/api/v1/templates").status_code == 200  # the key is remembered
    connection.close()  # a new connection: its session has no request bounds yet

    # the game's read opens its REPEATABLE READ snapshot before any other statement
    response = api.get("/api/v1/games/no-such-game")

    assert response.status_code == 404, response.content
