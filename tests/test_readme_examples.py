"""The README's example requests (opening a game, posting its deal) are posted as written, on the
demo data `make run` seeds, and must be accepted: the README never shows a body that fails."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.builders import funded_player, make_api

pytestmark = pytest.mark.django_db

README = Path(__file__).resolve().parents[1] / "README.md"
# curl -s http://127.0.0.1:8000/api/v1/<path> \ ... -H "Idempotency-Key: <key>" ... <<'JSON'
EXAMPLE = re.compile(
    r"curl -s http://127\.0\.0\.1:8000/api/v1/(?P<path>\S+) \\\n"
    r'.*?-H "Idempotency-Key: (?P<key>[^"]+)".*?<<\'JSON\'\n(?P<body>.*?)\nJSON\n',
    re.DOTALL,
)


def examples() -> list[tuple[str, str, dict]]:
    return [
        (m["path"], m["key"], json.loads(m["body"])) for m in EXAMPLE.finditer(README.read_text())
    ]


def test_the_readme_shows_opening_a_game_and_posting_its_deal():
    assert [path for path, _, _ in examples()] == ["games", "games/table-7-1/deals"]


def test_the_readme_examples_are_accepted_as_written():
    call_command("seed_games", verbosity=0)
    for player in ("demo-player-1", "demo-player-2"):
        funded_player(player, "1000.00")
    api, _ = make_api("games")

    statuses = [
        api.post(f"/api/v1/{path}", body, format="json", HTTP_IDEMPOTENCY_KEY=key).status_code
        for path, key, body in examples()
    ]

    assert statuses == [201, 202]
    game = api.get("/api/v1/games/table-7-1").json()
    assert [d["deal_no"] for d in game["deals"]] == [1]
