"""Demo data for `make run`: the demo API client with a new key (printed), funded demo players
(cash only where real money is offered: from an open region when it is restricted),
and one staff user per finance role plus a superuser, each with a new password of their own
(printed)."""

import secrets

from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand
from djmoney.money import Money

from wallets.api_keys import api_client_rekey
from wallets.models import CASH, CHIPS
from wallets.roles import APPROVER, OPERATOR, VIEWER, roles_ensure
from wallets.services.deposits import chips_grant, deposit_register
from wallets.services.real_money import demo_region, real_money_here

DEMO_CLIENT = "demo"
DEMO_PLAYERS = [f"demo-player-{n}" for n in range(1, 7)]
DEMO_STAFF = {"viewer": VIEWER, "operator": OPERATOR, "approver": APPROVER, "approver2": APPROVER}
SUPERUSER = "admin"


class Command(BaseCommand):
    help = (
        "Demo data: the demo API client with a new key (the previous one stops working), funded "
        "demo players, finance staff with new passwords."
    )

    def add_arguments(self, parser):
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")

    def handle(self, *args, base_url: str, **options):
        _client, key = api_client_rekey(name=DEMO_CLIENT, scopes=["games", "payments"])
        cash = real_money_here()
        if not cash.available:
            self.stdout.write(f"Demo players get chips only: {cash.reason}.")
        for player in DEMO_PLAYERS:
            if cash.available:
                deposit_register(
                    player_external_id=player,
                    amount=Money("1000.00", CASH),
                    reference=f"demo-{player}",
                    region=demo_region(),
                    changed_by="seed_demo",
                )
            chips_grant(
                player_external_id=player,
                amount=Money("10000.00", CHIPS),
                reference=f"demo-{player}",
            )
        self.stdout.write(f"Demo players funded: {', '.join(DEMO_PLAYERS)}")
        self.stdout.write(f"Admin {base_url}/admin/ users (new passwords, one each):")
        for username, password in demo_staff_reset().items():
            role = DEMO_STAFF.get(username, "superuser")
            self.stdout.write(f"  {username:<10} {role:<17} {password}")
        self.stdout.write(
            f"Try: curl -H 'Authorization: Api-Key {key}' "
            f"{base_url}/api/v1/players/{DEMO_PLAYERS[0]}/wallet"
        )


def demo_staff_reset() -> dict[str, str]:
    """Demo finance staff (one per role, and a superuser `admin`), each with a new password of
    their own: one leaked password opens one role, not the superuser's."""
    roles_ensure()
    passwords = {}
    for username, group in {**DEMO_STAFF, SUPERUSER: None}.items():
        user, _ = User.objects.get_or_create(username=username)
        user.is_staff = True
        user.is_superuser = group is None
        passwords[username] = secrets.token_urlsafe(12)
        user.set_password(passwords[username])
        user.save()
        if group:
            user.groups.set([Group.objects.get(name=group)])
    return passwords
