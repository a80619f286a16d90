from django.core.management.base import BaseCommand, CommandError

from rummy_ledger.api.keys import api_client_create
from rummy_ledger.api.models import ApiClient


class Command(BaseCommand):
    help = "Create an API client (game server or payment gateway); prints its key last."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument(
            "--scope", action="append", required=True, choices=ApiClient.Scope.values,
            dest="scopes", help="repeat for several scopes",
        )  # fmt: skip

    def handle(self, *args, name: str, scopes: list[str], **options):
        if ApiClient.objects.filter(name=name).exists():
            raise CommandError(f"an API client named {name!r} exists already")
        client, key = api_client_create(name=name, scopes=scopes)
        self.stdout.write(
            f"Created API client {client.name} with scopes {', '.join(client.scopes)}."
        )
        self.stdout.write("Keep this key now; it is stored only as a hash:")
        self.stdout.write(key)
