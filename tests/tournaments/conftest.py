"""Fixtures for game tests: a game server client. The builders are in tests/builders.py."""

from __future__ import annotations

import pytest

from tests.builders import Server


@pytest.fixture
def server(db):
    return Server()


@pytest.fixture
def settle(eager, django_capture_on_commit_callbacks):
    """Run each call's on-commit callbacks (the eager settlement task) before returning."""

    def run(call, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            response = call(*args, **kwargs)
        return response

    return run
