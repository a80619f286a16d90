"""Demo tournaments for the demo lobby client (`rummy_ledger/dev/demo/tournaments.py`): a chips
freeroll, and a cash tournament where real money is offered; a new one of a kind only when none
of that kind is registering (idempotent)."""

from django.core.management.base import BaseCommand

from rummy_ledger.dev.demo.tournaments import DEMO_TOURNAMENTS, demo_tournaments_schedule
from rummy_ledger.dev.management.commands.seed_demo import DEMO_CLIENT
from wallets.models import CHIPS
from wallets.services.real_money import real_money_here


class Command(BaseCommand):
    help = "Schedule the demo tournaments for the demo lobby client (after seed_demo)."

    def handle(self, *args, **options):
        cash = real_money_here().available
        kinds = [k for k, t in DEMO_TOURNAMENTS.items() if cash or t["currency"] == CHIPS]
        made = demo_tournaments_schedule(client=DEMO_CLIENT, kinds=kinds, by="seed_tournaments")
        if options["verbosity"]:
            names = ", ".join(t.slug for t in made) or "none (one of each is registering)"
            self.stdout.write(f"Demo tournaments scheduled: {names}")
