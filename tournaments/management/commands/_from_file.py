"""What `create_tournament` and `create_leaderboard` share: an object made from a JSON file by an
operator with shell access (finance proposes the same in the admin, approved by another person).
It refuses what the admin refuses, with the same messages, records who ran it (the OS user, or
--by), and prints the slug last."""

import getpass
import json

from django.core.management.base import BaseCommand, CommandError

from tournaments.errors import TermsInvalid


class FromFileCommand(BaseCommand):
    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--by", default="", help="who makes it (default: the OS user)")

    def handle(self, *args, file: str, by: str, **options):
        try:
            with open(file, encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError) as exc:
            raise CommandError(f"cannot read {file}: {exc}") from exc
        try:
            made = self.create(data, created_by=f"shell:{by or getpass.getuser()}")
        except TermsInvalid as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(self.summary(made))
        self.stdout.write(made.slug)

    def create(self, data, *, created_by: str):
        """The object made from the file's data (`TermsInvalid` when a field is refused)."""
        raise NotImplementedError

    def summary(self, made) -> str:
        raise NotImplementedError
