"""The state machine (tests/simulation/runs.py) on a PostgreSQL and a Redis of its own: each test
runs the machine's runs in a child pytest on the servers of a temporary data dir
(tests/simulation/servers.py), so that its faults (PostgreSQL restarted, the broker stopped)
never touch the suite's shared servers. The child's output, the failing sequence included, is
this test's (docs/testing.md, "The state machine")."""

from __future__ import annotations

import os

import pytest

from tests.simulation.servers import run_on_own_servers

SIM_SECONDS = float(os.environ.get("SIM_SECONDS") or 0)


@pytest.mark.timeout(600)  # the servers' start-up and the migrations, then the budget's runs
def test_the_api_agrees_with_the_model():
    """The fixed, seeded budget and the fixed sequences (`make test`)."""
    run_on_own_servers("-m", "not soak", passed=6)


@pytest.mark.soak
@pytest.mark.timeout(600)
def test_real_money_switched_off_and_back_agrees_with_the_model():
    """`make soak`, with or without SECONDS: the service restarted with real money off, then on
    (tests/simulation/real_money_rules.py), in a fixed sequence."""
    run_on_own_servers("-m", "soak", "-k", "real_money_switched", passed=1)


@pytest.mark.soak
@pytest.mark.skipif(
    not SIM_SECONDS,
    reason="the long run is asked for by its length: make soak SECONDS=3600 (CI runs the budget "
    "of make test: a long run beside the standby tests kept their standby from catching up)",
)
@pytest.mark.timeout(SIM_SECONDS + 900)
def test_the_api_agrees_with_the_model_for_a_long_time():
    """`make soak SECONDS=3600`: random sequences until the time is up; a failure is shrunk."""
    run_on_own_servers("-m", "soak", "-k", "long_time", passed=1)
