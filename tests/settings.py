"""The test run's settings: the production settings, with the embedded services opted in (a
`DATABASE_URL` or `CELERY_BROKER_URL` in the environment still wins)."""

import os

os.environ.setdefault("RUMMY_EMBEDDED", "1")

from rummy_ledger.settings import *  # noqa: F403
