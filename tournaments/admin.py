"""The app's admin, as Django's autodiscovery finds it: the games' pages
(`tournaments/games/admin/`), the tournaments' (`tournaments/tournaments/admin/`) and the
leaderboards' (`tournaments/leaderboards/admin.py`)."""

from tournaments.games import admin as games_admin
from tournaments.leaderboards import admin as leaderboards_admin
from tournaments.tournaments import admin as tournaments_admin

__all__ = ["games_admin", "leaderboards_admin", "tournaments_admin"]
