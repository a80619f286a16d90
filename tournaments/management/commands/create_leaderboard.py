"""`manage.py create_leaderboard FILE.json`: create a leaderboard from a file (operators with
shell access; finance proposes one in the admin, approved by another person): see
`_from_file.py`."""

from tournaments.leaderboards.services.setup import leaderboard_create, new_leaderboard_checked
from tournaments.management.commands._from_file import FromFileCommand


class Command(FromFileCommand):
    help = "Create a leaderboard from a JSON file; prints its slug last."

    def create(self, data, *, created_by: str):
        return leaderboard_create(spec=new_leaderboard_checked(data), created_by=created_by)

    def summary(self, made) -> str:
        return (
            f"Created leaderboard {made.name} ({made.currency}, {made.scoring}) for client "
            f"{made.client.name}."
        )
