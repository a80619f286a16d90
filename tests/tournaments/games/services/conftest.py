"""Fixtures of the game services' tests: the game server (an API client) the services act for.
The games and deals they start from are built by `tests.tournaments.games.services.tables`."""

from __future__ import annotations

import pytest

from tests.builders import make_api


@pytest.fixture
def server_client(db):
    """The `ApiClient` of a game server (scope `games`), as the API layer hands it over."""
    return make_api("games", name="game-server-1")[1]
