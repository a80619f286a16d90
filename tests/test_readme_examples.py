"""The README's walk-through (deposit, KYC, open a game, post its deal, withdraw, finance's review
and approval, the gateway's `/paid`), then its refund with real money off (a deposit refused, the
whole balance withdrawn with its TDS, `/paid`), is run as written, on the demo data `make run`
seeds: every request is answered with the status the README shows, and the answer it shows (in
part) is the answer given. The README never shows an answer the service does not give."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.core.management import call_command

from rummy_ledger.dev.management.commands.simulate import finance_approves
from tests.architecture.test_openapi import strictly_valid
from tests.builders import funded_player, make_api
from wallets.models import Withdrawal

pytestmark = pytest.mark.django_db

README = Path(__file__).resolve().parents[1] / "README.md"
LAW = "## The law in India"  # its walk runs with REAL_MONEY=off
# curl -s http://127.0.0.1:8000/api/v1/<path> \ <headers> <<'JSON' <body> JSON # <status> <answer>
EXAMPLE = re.compile(
    r"curl -s http://127\.0\.0\.1:8000/api/v1/(?P<path>\S+) \\\n(?P<headers>.*?)<<'JSON'\n"
    r"(?P<body>.*?)\nJSON\n# (?P<status>\d{3}) (?P<answer>.*?)\n```",
    re.DOTALL,
)
KEY = re.compile(r'-H "Idempotency-Key: (?P<key>[^"]+)"')
IDS = {"transfer_id", "withdrawal_id"}  # numbered by the database: any number will do


def examples() -> list[dict]:
    text = README.read_text(encoding="utf-8")
    law_from = text.index(LAW)
    found = []
    for m in EXAMPLE.finditer(text):
        key = KEY.search(m["headers"])
        answer = re.sub(r"\n#\s*", " ", m["answer"])
        found.append(
            {
                "path": m["path"],
                "key": key["key"] if key else None,
                "body": json.loads(m["body"]),
                "status": int(m["status"]),
                "answer": json.loads(answer),
                "real_money": "off" if m.start() > law_from else "on",
            }
        )
    return found


def shown_in(shown, given, where: str = "") -> None:
    """Every field the README shows has the value the service gave (ids aside)."""
    if isinstance(shown, dict):
        assert isinstance(given, dict), where
        for name, value in shown.items():
            assert name in given, f"{where}.{name}"
            if name not in IDS:
                shown_in(value, given[name], f"{where}.{name}")
    else:
        assert shown == given, where


def test_the_readme_walks_from_a_deposit_to_a_paid_withdrawal_then_to_a_refund():
    assert [(e["real_money"], e["path"].split("/")[-1]) for e in examples()] == [
        ("on", "deposits"), ("on", "kyc"), ("on", "games"), ("on", "deals"),
        ("on", "withdrawals"), ("on", "paid"),
        ("off", "deposits"), ("off", "withdrawals"), ("off", "paid"),
    ]  # fmt: skip


def walk(settings, capture):
    """The walk as written: each example with the answer it was given."""
    call_command("seed_games", verbosity=0)
    funded_player("demo-player-2", "1000.00")
    api, _ = make_api("games", "payments")
    withdrawal_id = None

    for example in examples():
        settings.REAL_MONEY = example["real_money"]
        path = example["path"].replace("$WD", str(withdrawal_id))
        waits = Withdrawal.objects.filter(pk=withdrawal_id, status="requested").exists()
        if path.endswith("/paid") and waits:
            finance_approves()(withdrawal_id)  # step 6: an operator reviews, an approver approves
        headers = {"HTTP_IDEMPOTENCY_KEY": example["key"]} if example["key"] else {}
        with capture(execute=True):  # a deal is settled at once
            response = api.post(f"/api/v1/{path}", example["body"], format="json", **headers)
        yield example, path, response
        withdrawal_id = response.json().get("withdrawal_id", withdrawal_id)


def test_the_readme_walk_gives_the_answers_it_shows(
    eager, django_capture_on_commit_callbacks, settings
):
    for example, path, response in walk(settings, django_capture_on_commit_callbacks):
        assert response.status_code == example["status"], (path, response.content)
        shown_in(example["answer"], response.json(), path)


def test_every_answer_of_the_walk_is_valid_to_a_strict_openapi_tool(
    eager, django_capture_on_commit_callbacks, settings
):
    """openapi-core, strict, on the document as served (tests/architecture/test_openapi.py)."""
    answers = 0
    for _example, _path, response in walk(settings, django_capture_on_commit_callbacks):
        strictly_valid(response)
        answers += 1
    assert answers == len(examples())
