"""The app's admin, as Django's autodiscovery finds it: the games' pages
(`tournaments/games/admin/`) and the tournaments' (`tournaments/tournaments/admin/`)."""

from tournaments.games import admin as games_admin
from tournaments.tournaments import admin as tournaments_admin

__all__ = ["games_admin", "tournaments_admin"]
