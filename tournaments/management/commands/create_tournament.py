"""`manage.py create_tournament FILE.json`: schedule a tournament from a file (operators with
shell access; finance uses the admin). It refuses what the admin refuses, with the same
messages, records who ran it (the OS user, or --by), and prints the slug last."""

import getpass
import json

from django.core.management.base import BaseCommand, CommandError

from tournaments.errors import TermsInvalid
from tournaments.tournaments.services.setup import tournament_create, tournament_fields_checked


class Command(BaseCommand):
    help = "Schedule a tournament from a JSON file; prints its slug last."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--by", default="", help="who schedules it (default: the OS user)")

    def handle(self, *args, file: str, by: str, **options):
        try:
            with open(file, encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError) as exc:
            raise CommandError(f"cannot read {file}: {exc}") from exc
        try:
            spec = tournament_fields_checked(data)
            tournament = tournament_create(spec=spec, created_by=f"shell:{by or getpass.getuser()}")
        except TermsInvalid as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(
            f"Created tournament {tournament.name} ({tournament.currency}, "
            f"{tournament.max_players} seats) for client {tournament.client.name}."
        )
        self.stdout.write(tournament.slug)
