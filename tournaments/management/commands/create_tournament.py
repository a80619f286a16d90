"""`manage.py create_tournament FILE.json`: schedule a tournament from a file (operators with
shell access; finance uses the admin): see `_from_file.py`."""

from tournaments.management.commands._from_file import FromFileCommand
from tournaments.tournaments.services.setup import tournament_create, tournament_fields_checked


class Command(FromFileCommand):
    help = "Schedule a tournament from a JSON file; prints its slug last."

    def create(self, data, *, created_by: str):
        return tournament_create(spec=tournament_fields_checked(data), created_by=created_by)

    def summary(self, made) -> str:
        return (
            f"Created tournament {made.name} ({made.currency}, {made.max_players} seats) for "
            f"client {made.client.name}."
        )
