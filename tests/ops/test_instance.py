"""The instance header on every response, and the simulator refusing any other server."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from rummy_ledger.api.models import ApiClient
from rummy_ledger.dev.demo.simulator import Http, WrongServer
from rummy_ledger.instance import ENV, HEADER


def test_every_response_carries_the_instance_token(monkeypatch):
    monkeypatch.setenv(ENV, "run-1")
    client = Client()  # loads the middleware chain on its first request
    assert client.get("/api/v1/templates")[HEADER] == "run-1"  # 401: no key
    assert client.get("/no/such/page")[HEADER] == "run-1"  # 404
    assert client.get("/api/schema/")[HEADER] == "run-1"  # 200


def test_without_a_token_there_is_no_header(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    assert HEADER not in Client().get("/no/such/page")


@pytest.fixture
def other_server():
    """Another HTTP server on the simulator's address: answers everything with 200 and `{}`,
    naming the instance given in `.instance` (None: no header at all)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            if server.instance is not None:
                self.send_header(HEADER, server.instance)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(json.dumps({}).encode())

        do_POST = do_GET

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.instance = None
    server.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("answering", [None, "someone-else"])
def test_the_simulator_refuses_a_server_that_is_not_its_own(other_server, answering):
    other_server.instance = answering
    http = Http(other_server.url, "key", instance="mine")
    with pytest.raises(WrongServer, match="answered by another server"):
        http.get("templates")
    with pytest.raises(WrongServer):
        http.post("games", {"game_id": "g"})


def test_the_simulator_plays_against_its_own_server(other_server):
    other_server.instance = "mine"
    assert Http(other_server.url, "key", instance="mine").get("templates") == {}
    assert Http(other_server.url, "key").get("templates") == {}  # no token: no check


@pytest.mark.django_db
def test_simulate_stops_before_writing_anything_when_another_server_answers(other_server):
    other_server.instance = "someone-else"
    with pytest.raises(CommandError, match=r"Not simulating: .* answered by another server"):
        call_command("simulate", base_url=other_server.url, instance="mine", wait=5)
    assert not ApiClient.objects.exists()
