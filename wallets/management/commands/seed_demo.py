"""Demo data for `make run`: an API client whose key is printed, funded demo players, and one
staff user per finance role (a new random password each run, printed)."""

import secrets

from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand
from djmoney.money import Money

from wallets.api_keys import api_client_create
from wallets.models import CASH, CHIPS, ApiClient
from wallets.services import chips_grant, deposit_register

DEMO_PLAYERS = [f"demo-player-{n}" for n in range(1, 7)]
DEMO_STAFF = {
    "viewer": "finance viewer",
    "operator": "finance operator",
    "approver": "finance approver",
    "approver2": "finance approver",
}


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
        password = demo_staff_reset()
        self.stdout.write(
            f"Admin {base_url}/admin/ users {', '.join(DEMO_STAFF)} (finance roles) and admin "
            f"(superuser), password for all: {password}"
        )
        self.stdout.write(
            f"Try: curl -H 'Authorization: Api-Key {key}' "
            f"{base_url}/api/v1/players/{DEMO_PLAYERS[0]}/wallet"
        )


def demo_staff_reset() -> str:
    """Demo finance staff (one per role, and a superuser `admin`), all with one new password."""
    password = secrets.token_urlsafe(9)
    for username, group in {**DEMO_STAFF, "admin": None}.items():
        user, _ = User.objects.get_or_create(username=username)
        user.is_staff = True
        user.is_superuser = group is None
        user.set_password(password)
        user.save()
        if group:
            user.groups.set([Group.objects.get(name=group)])
    return password
