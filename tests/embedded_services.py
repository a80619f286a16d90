"""The pytest plugin that starts the embedded services before pytest-django reads the settings
(pyproject's addopts load it with `-p tests.embedded_services`): the run opts in to them
(`RUMMY_EMBEDDED=1`, unless set otherwise) and `rummy_ledger/dev/environment.py` fills in the
DATABASE_URL, CELERY_BROKER_URL and DJANGO_SECRET_KEY the environment does not set. pytest-xdist's
workers and every process a test starts inherit them."""

import os

import pytest


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(early_config, parser, args):
    os.environ.setdefault("RUMMY_EMBEDDED", "1")
    from rummy_ledger.dev.environment import environ_prepare

    environ_prepare()
    return (yield)
