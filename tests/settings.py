"""The test run's settings: the production settings, with the embedded services opted in.

pytest-django reads these before any conftest is loaded, in pytest's process and in each
pytest-xdist worker, so this is where a test run starts (or attaches to) the embedded PostgreSQL
and sets the URLs the production settings read (`rummy_ledger/dev/environment.py`; a
`DATABASE_URL` or `CELERY_BROKER_URL` in the environment still wins). The workers and every
process a test starts inherit them."""

import os

os.environ.setdefault("RUMMY_EMBEDDED", "1")

from rummy_ledger.dev.environment import environ_prepare

environ_prepare()

from rummy_ledger.settings import *  # noqa: E402, F403

# A test run reads no standby (REPLICA_DATABASE_URL is the service's): the tests that need one make
# their own of the test server (tests/ops/test_replica.py).
DATABASES.pop("replica", None)  # noqa: F405

# A fast hasher for the users tests make (Django's advice for test runs): the production one,
# PBKDF2 at 1,000,000 iterations, costs 0.4 s a password on these cores. The processes a test
# starts (`serve`, the demo's seed) read the production settings and hash as production does.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
