"""The test run's settings: the production settings, with the embedded services opted in. The
pytest plugin `tests/embedded_services.py` has started them and set their URLs before these are
read (a `DATABASE_URL` or `CELERY_BROKER_URL` in the environment still wins)."""

import os

os.environ.setdefault("RUMMY_EMBEDDED", "1")

from rummy_ledger.settings import *  # noqa: F403

# A test sees its task sends made by the time its request returns; the publisher thread that
# production uses (rummy_ledger.publisher) has its own test (tests/ops/test_publisher.py), and
# the `serve` end-to-end tests run with it.
CELERY_PUBLISH_IN_BACKGROUND = False
