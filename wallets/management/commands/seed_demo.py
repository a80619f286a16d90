"""Demo data for `make run`: an API client whose key is printed, and funded demo players."""

from django.core.management.base import BaseCommand
from djmoney.money import Money

from wallets.api_keys import api_client_create
from wallets.models import CASH, CHIPS, ApiClient
from wallets.services import chips_grant, deposit_register

DEMO_PLAYERS = [f"demo-player-{n}" for n in range(1, 7)]


class Command(BaseCommand):
    help = "Create a demo API client (a new key each run) and fund the demo players."

    def add_arguments(self, parser):
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")

    def handle(self, *args, base_url: str, **options):
        name = f"demo-{ApiClient.objects.count() + 1}"
        _client, key = api_client_create(name=name, scopes=["games", "payments"])
        for player in DEMO_PLAYERS:
            deposit_register(
                player_external_id=player, amount=Money("1000.00", CASH), reference=f"demo-{player}"
            )
            chips_grant(
                player_external_id=player,
                amount=Money("10000.00", CHIPS),
                reference=f"demo-{player}",
            )
        self.stdout.write(f"Demo players funded: {', '.join(DEMO_PLAYERS)}")
        self.stdout.write(
            f"Try: curl -H 'Authorization: Api-Key {key}' "
            f"{base_url}/api/v1/players/{DEMO_PLAYERS[0]}/wallet"
        )
