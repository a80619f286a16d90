from pathlib import Path

import pytest

from rummy_ledger.celery import app as celery_app
from tests import flush
from tests.builders import make_api


@pytest.fixture(scope="session", autouse=True)
def _quick_flush():
    """Between transactional tests the database is emptied by tests/flush.py."""
    from django.test import TransactionTestCase

    original = TransactionTestCase._fixture_teardown
    TransactionTestCase._fixture_teardown = flush.fixture_teardown
    yield
    TransactionTestCase._fixture_teardown = original


@pytest.fixture
def games_api(db):
    return make_api("games", name="game-server-1")[0]


@pytest.fixture
def payments_api(db):
    return make_api("payments", name="gateway")[0]


@pytest.fixture(autouse=True)
def demo_files(settings, tmp_path):
    """seed_demo keeps the demo's key and passwords under .data/: a test's go elsewhere."""
    settings.DEMO_SECRETS_FILE = tmp_path / "demo-secrets.json"
    settings.DEMO_NOTE_FILE = tmp_path / "demo.txt"


@pytest.fixture(autouse=True)
def _no_wake_held_back(monkeypatch):
    """A test's first wake is sent, not held back by an earlier test's (`AfterCommitTask.wake`:
    a process sends none while its last is still to run, or after the broker refused one)."""
    for task in celery_app.tasks.values():
        monkeypatch.setattr(task, "_wake_due", 0.0, raising=False)


@pytest.fixture(scope="session")
def private_redis(tmp_path_factory):
    """A Redis of this test process's own (the embedded tooling's redis-server on a socket under a
    temporary directory): no other test, worker or run touches its keys or its statistics."""
    from rummy_ledger.dev import embedded

    directory = tmp_path_factory.mktemp("redis")
    embedded.ensure_redis(directory)
    yield embedded.redis_url(directory)
    embedded.stop_redis(directory)


@pytest.fixture
def rate_limits(private_redis, settings, monkeypatch):
    """The API's rate limits in `private_redis`, with this process's memory of a Redis outage
    forgotten (rummy_ledger.api.limits)."""
    from rummy_ledger.api import limits

    settings.RATE_LIMIT_REDIS_URL = private_redis
    monkeypatch.setattr(limits, "_down_until", {})
    monkeypatch.setattr(limits, "_leases", {})
    return private_redis


@pytest.fixture
def eager():
    """Celery runs tasks in-process: settlement happens when the request's transaction commits."""
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = previous


def pytest_sessionfinish(session, exitstatus):
    """Leave no embedded broker running that this session started (the database stops itself).
    Under pytest-xdist a worker hands what it started to the controller, which stops it once
    every worker is done (a worker stopping it would pull it from under the other)."""
    from rummy_ledger.dev import embedded
    from tests.tournaments.worker import STARTED_BROKER

    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["started_broker"] = [str(data_dir) for data_dir in STARTED_BROKER]
        return
    for data_dir in STARTED_BROKER:
        embedded.stop_redis(data_dir)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, run without it too
def pytest_testnodedown(node, error):
    """pytest-xdist: a worker finished; its started broker is now the controller's to stop."""
    from tests.tournaments.worker import STARTED_BROKER

    started = getattr(node, "workeroutput", {}).get("started_broker", [])
    STARTED_BROKER.extend(Path(data_dir) for data_dir in started)


# The files whose tests take tens of seconds each (a browser crawl, `serve`, migrations back and
# forth, killed processes, the simulators), slowest first. pytest-xdist hands tests out in
# collection order, so a long test collected last keeps one worker busy while the other idles:
# run them first and the short ones fill the gaps (longest-first scheduling).
SLOW_FIRST = (
    # soak scenarios, which `make test-services` runs on the machine's servers: its longest
    # (234-243 s and 47-53 s there)
    "tests/ops/test_failover.py",
    "tests/ops/test_pitr.py",
    "tests/browser/test_every_page.py",
    "tests/simulation/test_api_machine.py",
    "tests/ops/test_serve.py",
    "tests/wallets/test_money_migration.py",
    "tests/wallets/test_gst_migration.py",
    "tests/wallets/test_wind_down_processes.py",
    "tests/wallets/test_sql_files.py",
    "tests/tournaments/test_simulator.py",
    "tests/architecture/test_data_migrations.py",
    "tests/ops/test_embedded_attach.py",
    "tests/ops/test_replica.py",
    "tests/ops/test_tooling.py",
    "tests/wallets/test_simulator_money.py",
    "tests/tournaments/test_tournament_races.py",
    "tests/tournaments/test_worker.py",
    "tests/tournaments/test_worker_rules_round3.py",
    "tests/tournaments/test_deal_batch.py",
    "tests/wallets/test_money_killed.py",
    "tests/rummy/test_properties.py",
    "tests/ops/test_beat_leader.py",
    "tests/ops/test_broker_outage.py",
    "tests/browser/test_tournament_pages.py",
    "tests/browser/test_wind_down.py",
    "tests/api/test_fuzz.py",
)


def pytest_collection_modifyitems(items):
    def rank(item) -> int:
        path = item.nodeid.split("::")[0]
        return SLOW_FIRST.index(path) if path in SLOW_FIRST else len(SLOW_FIRST)

    items.sort(key=rank)  # stable: the rest keep their order
