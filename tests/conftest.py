import pytest

from rummy_ledger.celery import app as celery_app
from tests.builders import make_api


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


@pytest.fixture
def eager():
    """Celery runs tasks in-process: settlement happens when the request's transaction commits."""
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = previous


def pytest_sessionfinish(session, exitstatus):
    """Leave no embedded broker running that this session started (the database stops itself)."""
    from rummy_ledger import embedded
    from tests.tournaments.worker import STARTED_BROKER

    for data_dir in STARTED_BROKER:
        embedded.stop_redis(data_dir)
