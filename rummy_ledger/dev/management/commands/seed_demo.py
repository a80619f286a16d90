"""Demo data for `make run`: the demo API client, funded demo players (cash only where real
money is offered: from an open region when it is restricted), and one staff user per finance
role plus a superuser, each with a password of their own and an authenticator (TOTP) secret
printed as an `otpauth://` URI.

The key and the passwords are drawn once and kept for the life of `.data/`
(`settings.DEMO_SECRETS_FILE`, readable by its owner only): a restart keeps the README's example
and a saved Swagger authorisation working, `make clean` draws new ones. What a person needs (URLs,
key, passwords) is printed and written to `settings.DEMO_NOTE_FILE`; `serve` prints that file
again at the end of its start-up.
"""

import json
import secrets

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand
from django_otp.plugins.otp_totp.models import TOTPDevice
from djmoney.money import Money

from rummy_ledger.api.keys import api_client_rekey
from wallets.models import CASH, CHIPS
from wallets.roles import APPROVER, OPERATOR, VIEWER, roles_ensure
from wallets.services.deposits import chips_grant, deposit_register
from wallets.services.real_money import demo_region, real_money_here

DEMO_CLIENT = "demo"
DEMO_SCOPES = ["games", "payments"]
DEMO_PLAYERS = [f"demo-player-{n}" for n in range(1, 7)]
DEMO_STAFF = {"viewer": VIEWER, "operator": OPERATOR, "approver": APPROVER, "approver2": APPROVER}
SUPERUSER = "admin"


class Command(BaseCommand):
    help = (
        "Demo data: the demo API client, funded demo players, finance staff; the key and the "
        "passwords are kept for the life of .data/ and printed."
    )

    def add_arguments(self, parser):
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")

    def handle(self, *args, base_url: str, **options):
        kept = _secrets_load()
        try:
            _client, key = api_client_rekey(
                name=DEMO_CLIENT, scopes=DEMO_SCOPES, key=kept.get("key")
            )
        except ValueError:  # a damaged file: new secrets
            kept = {}
            _client, key = api_client_rekey(name=DEMO_CLIENT, scopes=DEMO_SCOPES)
        cash = real_money_here()
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
        passwords = demo_staff_reset(kept.get("passwords", {}))
        authenticators = demo_authenticators(kept.get("totp", {}))
        totp = {name: device.key for name, device in authenticators.items()}
        _secrets_save({"key": key, "passwords": passwords, "totp": totp})
        funded = "1,000.00 INR deposited and" if cash.available else f"(chips only: {cash.reason})"
        note = demo_note(base_url, key, passwords, players=f"{funded} 10,000 chips each")
        note += demo_authenticators_note(authenticators)
        settings.DEMO_NOTE_FILE.write_text(note)
        if options["verbosity"]:
            self.stdout.write(note, ending="")


def demo_note(base_url: str, key: str, passwords: dict[str, str], *, players: str) -> str:
    staff = [
        f"    {name:<10} {DEMO_STAFF.get(name, 'superuser'):<17} {password}"
        for name, password in passwords.items()
    ]
    lines = [
        f"The demo ({settings.DEMO_NOTE_FILE}; key and passwords last until `make clean`):",
        f"  API docs  {base_url}/api/docs/  (Authorize: Api-Key <key>)",
        f"  API key   {key}  (client {DEMO_CLIENT!r}: {', '.join(DEMO_SCOPES)})",
        f"  try       curl -H 'Authorization: Api-Key {key}' "
        f"{base_url}/api/v1/players/{DEMO_PLAYERS[0]}/wallet",
        f"  players   {DEMO_PLAYERS[0]} ... {DEMO_PLAYERS[-1]}: {players}",
        f"  admin     {base_url}/admin/ as",
        *staff,
    ]
    return "\n".join(lines) + "\n"


def demo_authenticators_note(authenticators: dict[str, TOTPDevice]) -> str:
    lines = [
        "  second factor: add each to an authenticator app (a QR code of the URI, or its secret)",
        *(f"      {name:<10} {device.config_url}" for name, device in authenticators.items()),
    ]
    return "\n".join(lines) + "\n"


def demo_key() -> str | None:
    """The demo lobby's key as seed_demo keeps it (the simulator plays the demo tournaments
    with it); None before seed_demo has run."""
    return _secrets_load().get("key")


def _secrets_load() -> dict:
    try:
        return json.loads(settings.DEMO_SECRETS_FILE.read_text())
    except (OSError, ValueError):
        return {}


def _secrets_save(kept: dict) -> None:
    path = settings.DEMO_SECRETS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=0o600)
    path.write_text(json.dumps(kept))


def demo_staff_reset(kept: dict[str, str]) -> dict[str, str]:
    """Demo finance staff (one per role, and a superuser `admin`), each with a password of their
    own (the kept one, else a new one): one leaked password opens one role, not the
    superuser's."""
    roles_ensure()
    passwords = {}
    for username, group in {**DEMO_STAFF, SUPERUSER: None}.items():
        user, _ = User.objects.get_or_create(username=username)
        user.is_staff = True
        user.is_superuser = group is None
        passwords[username] = kept.get(username) or secrets.token_urlsafe(12)
        user.set_password(passwords[username])
        user.save()
        if group:
            user.groups.set([Group.objects.get(name=group)])
    return passwords


def demo_authenticators(kept: dict[str, str]) -> dict[str, TOTPDevice]:
    """Each demo staff user's authenticator (their second factor: rummy_ledger/staff), with the
    kept secret (hex) or a new one, confirmed: `make run`'s staff sign in with a code from an app
    that was given the `otpauth://` URI. Their recovery codes are the enrolment page's only."""
    devices = {}
    for username in [*DEMO_STAFF, SUPERUSER]:
        user = User.objects.get(username=username)
        TOTPDevice.objects.filter(user=user).delete()
        secret = {"key": kept[username]} if username in kept else {}
        devices[username] = TOTPDevice.objects.create(
            user=user, name="authenticator", confirmed=True, **secret
        )
    return devices
