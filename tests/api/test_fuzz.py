"""A schema-driven fuzz run against the live server: schemathesis generates requests
from the OpenAPI schema, valid and invalid (NUL characters included), for every operation, and
sends them over real HTTP with a key holding every scope. Asserted for every response: no 5xx,
a status, content type, headers and body the schema documents (the error code among those of its
operation and status), a request the schema calls invalid refused, one it calls valid not refused
as malformed (the schema declares every pattern and bound the server enforces:
tests/api/test_schema.py), and a refusal that wrote nothing; after the
run, the reconciliation is clean and the players hold exactly what the accepted deposits
credited. Bounded (a fixed number of examples per operation, a fixed seed) so that it can run in
`make test` on every commit, in about a minute.
"""

from __future__ import annotations

import re
import time
import uuid
from decimal import Decimal

import pytest
import schemathesis
from django.db.models import Sum
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import AcceptedNegativeData
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    positive_data_acceptance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from rummy_ledger.api.idempotency import HEADER, KEY_PATTERN
from rummy_ledger.api.keys import api_client_create
from tests.api.conftest import ledger_state
from tests.architecture.test_openapi import closed
from tests.builders import funded_player, template
from wallets.models import Account, ReconciliationReport, Withdrawal
from wallets.reconciliation import reconcile_run

pytestmark = pytest.mark.django_db(transaction=True)

SEED = 20261111
EXAMPLES_PER_OPERATION = 20
# A request the schema calls valid may still be refused for what it names (404: no such player
# or game), for the state (409) or by the rules (422); never as malformed (400, 413, 415).
ACCEPTED = ["200", "201", "202", "404", "409", "422"]
# Where a schema cannot say what is valid: cards and hands are judged by the rules engine
# (400 `invalid_card`, `invalid_deal`), and a hand's `rules` by the rule presets.
RULES_ENGINE = {"POST /api/v1/games/{game_id}/deals", "POST /api/v1/hands/evaluate"}
# The batch of deals answers each deal on its own: one the schema calls invalid is refused in its
# result (400) inside the 200, not by the request's status.
BATCHES = {"POST /api/v1/deals"}
CONFIG = {
    "seed": SEED,
    "generation": {"mode": "all", "max-examples": EXAMPLES_PER_OPERATION, "allow-x00": True},
    "phases": {"stateful": {"enabled": False}},
    "checks": {"positive_data_acceptance": {"expected-statuses": ACCEPTED}},
    # A batch's deals are the single post's bodies, whose every bound the coverage phase of that
    # operation walks already: here the other phases only (a few seconds, not twenty).
    "operations": [{"include-path": "/api/v1/deals", "phases": {"coverage": {"enabled": False}}}],
}
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
]


def deals_refused_on_their_own(ctx, response, case):
    """`negative_data_rejection`, or the 200 of a batch in which a deal is refused as malformed."""
    try:
        return negative_data_rejection(ctx, response, case)
    except AcceptedNegativeData:
        results = response.json()["results"] if response.status_code == 200 else []
        if not any(result["status"] == 400 for result in results):
            raise
        return None


class Run:
    """What the run saw: cases sent, and what the accepted deposits credited."""

    def __init__(self, key: str):
        self.key = key
        self.cases = 0
        self.statuses: dict[int, int] = {}
        self.deposited = Decimal(0)


@pytest.fixture
def fuzz_run(live_server, eager):
    template("points-2", "points")
    for player in ("a", "b"):
        funded_player(player)
    _client, key = api_client_create(name="fuzzer", scopes=["games", "payments"])
    run = Run(key)
    start_balances = _player_total()
    started = time.perf_counter()
    yield run
    elapsed = time.perf_counter() - started
    statuses = dict(sorted(run.statuses.items()))
    print(f"\nfuzz: {run.cases} cases in {elapsed:.1f} s, statuses {statuses}")
    assert run.cases >= 10, run.cases
    report = reconcile_run(trigger="command")
    assert report.status == ReconciliationReport.Status.CLEAN, list(report.discrepancies.values())
    paid_out = Withdrawal.objects.filter(status__in=["approved", "paid"]).aggregate(
        total=Sum("amount")
    )["total"] or Decimal(0)  # withdrawals that left the wallets (the rest came back)
    assert _player_total() == start_balances + run.deposited - paid_out


def _player_total() -> Decimal:
    players = Account.objects.filter(kind=Account.Kind.PLAYER, balance_currency="INR")
    return players.aggregate(total=Sum("balance"))["total"] or Decimal(0)


# The schema /api/schema/ serves, built in-process at collection (the live server's address is
# only known when the test runs; schemathesis's fixture-based loader does not run on pytest 9).
# Its enums closed: an answer carries only a value the schema lists.
schema = schemathesis.openapi.from_dict(
    closed(SchemaGenerator().get_schema(request=None, public=True)),
    config=schemathesis.Config.from_dict(CONFIG),
)


@schema.parametrize()
# filter_too_much: the amount patterns' bounds are lookaheads, which hypothesis meets by filtering
@settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much],
    deadline=None,
)
def test_fuzz_the_api(case, fuzz_run, live_server):
    key = (case.headers or {}).get(HEADER)
    if isinstance(key, str) and re.fullmatch(KEY_PATTERN, key):
        # a valid key, but a fresh one: a generated "0" reused by every case replays the first
        case.headers[HEADER] = uuid.uuid4().hex
    before = ledger_state()
    label = case.operation.label
    checks = CHECKS if label in RULES_ENGINE else [*CHECKS, positive_data_acceptance]
    if label in BATCHES:
        checks = [deals_refused_on_their_own if c is negative_data_rejection else c for c in checks]
    response = case.call_and_validate(
        base_url=live_server.url,
        headers={"Authorization": f"Api-Key {fuzz_run.key}"},
        checks=checks,
    )
    fuzz_run.cases += 1
    fuzz_run.statuses[response.status_code] = fuzz_run.statuses.get(response.status_code, 0) + 1
    if response.status_code >= 400:
        assert ledger_state() == before, f"a refused {case.method} {case.path} wrote something"
    elif case.method == "POST" and case.path.endswith("/deposits") and response.status_code == 201:
        fuzz_run.deposited += Decimal(response.json()["credited"])  # the part net of GST
