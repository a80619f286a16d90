"""Builders for tournament tests: a tournament file, a scheduled tournament, a lobby client that
speaks real HTTP to the live test server."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
import uuid
from datetime import timedelta

from django.utils import timezone

from rummy_ledger.api.keys import api_client_create
from tests.builders import make_api
from tournaments.models import Tournament
from tournaments.services.tournament_setup import tournament_create, tournament_fields_checked


def tournament_file(**overrides) -> dict:
    data = {
        "slug": "sunday-100",
        "name": "Sunday 100",
        "client": "lobby",
        "currency": "INR",
        "entry_fee": "100.00",
        "fee_percent": "15.00",
        "guarantee": "500.00",
        "min_players": 4,
        "max_players": 50,
        "table_size": 6,
        "registration_closes_at": (timezone.now() + timedelta(hours=1)).isoformat(),
        "bonus_cap_percent": "10.00",
        "rounds": [{"qualify_top": 2}, {"final": True}],
        "rebuy": {"price": "50.00", "max_per_player": 2, "until_round": 1},
        "prizes": [{"ranks": "1", "percent": "50.00"}, {"ranks": "2-3", "percent": "25.00"}],
    }
    data.update(overrides)
    return data


def scheduled(**overrides) -> Tournament:
    return tournament_create(
        spec=tournament_fields_checked(tournament_file(**overrides)), created_by="test"
    )


class Lobby:
    """The lobby over real HTTP (urllib against the live server); every write has a fresh key
    unless one is given. Returns (status, body)."""

    def __init__(self, base_url: str, name: str = "lobby"):
        self.client, self.key = api_client_create(name=name, scopes=["games"])
        self.base = base_url.rstrip("/") + "/api/v1/tournaments"

    def call(self, method: str, path: str = "", body=None, key: str | None = None):
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Api-Key {self.key}", "Content-Type": "application/json"}
        if method != "GET":
            headers["Idempotency-Key"] = key or uuid.uuid4().hex
        request = urllib.request.Request(self.base + path, data, headers, method=method)
        for _ in range(50):  # the test server's listen queue is short: a refused connection is
            try:  # tried again with the same Idempotency-Key (a repeat replays)
                with urllib.request.urlopen(request, timeout=30) as response:
                    return response.status, json.loads(response.read() or b"{}")
            except urllib.error.HTTPError as exc:
                return exc.code, json.loads(exc.read() or b"{}")
            except (ConnectionError, urllib.error.URLError):
                time.sleep(0.05)
        raise AssertionError(f"{method} {path}: no connection")

    def get(self, slug: str = ""):
        return self.call("GET", f"/{slug}" if slug else "")

    def register(self, slug: str, player: str, **kw):
        return self.call("POST", f"/{slug}/registrations", {"player": player}, **kw)

    def unregister(self, slug: str, player: str, **kw):
        return self.call("DELETE", f"/{slug}/registrations/{player}", **kw)

    def start(self, slug: str, **kw):
        return self.call("POST", f"/{slug}/start", {}, **kw)

    def cancel(self, slug: str, **kw):
        return self.call("POST", f"/{slug}/cancel", {}, **kw)

    def rebuy(self, slug: str, player: str, **kw):
        return self.call("POST", f"/{slug}/rebuys", {"player": player}, **kw)

    def round(self, slug: str, n: int, tables: list, **kw):
        return self.call("POST", f"/{slug}/rounds/{n}", {"tables": tables}, **kw)


def table(name: str, *rows: tuple[str, int, int]) -> dict:
    """A table's standings from (player, position, chips) rows."""
    return {
        "table": name,
        "standings": [{"player": p, "position": pos, "chips": c} for p, pos, c in rows],
    }


__all__ = ["Lobby", "make_api", "scheduled", "table", "tournament_file"]
