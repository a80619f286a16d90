"""`manage.py simulate`: a game-server simulator playing real games over HTTP against a running
service, then a summary per template and a check that the books balance."""

import time
import urllib.error
import urllib.request
from decimal import Decimal

from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.db import connection
from djmoney.money import Money

from tournaments.models import Game
from tournaments.simulator import Http, Simulator
from wallets.api_keys import api_client_create
from wallets.models import CHIPS, ApiClient
from wallets.services import chips_grant

LEDGER_CHECKS = {
    "transfers that do not sum to zero": """
        SELECT transfer_id FROM wallets_entry
        GROUP BY transfer_id, amount_currency HAVING sum(amount) <> 0""",
    "cached balances that differ from their entries": """
        SELECT a.code FROM wallets_account a LEFT JOIN wallets_entry e ON e.account_id = a.id
        WHERE a.kind <> 'platform' GROUP BY a.id HAVING a.balance <> coalesce(sum(e.amount), 0)""",
    "currencies that do not net to zero": """
        SELECT amount_currency FROM wallets_entry
        GROUP BY amount_currency HAVING sum(amount) <> 0""",
}


class Command(BaseCommand):
    help = "Play a stream of real games over HTTP against a running service."

    def add_arguments(self, parser):
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")
        parser.add_argument("--rounds", type=int, default=3, help="games per template")
        parser.add_argument("--players", type=int, default=12)
        parser.add_argument("--seed", type=int, default=None)
        parser.add_argument("--wait", type=float, default=60, help="seconds to wait for the web")

    def handle(self, *args, base_url, rounds, players, seed, wait, **options):
        call_command("seed_games", verbosity=0)
        name = f"simulator-{ApiClient.objects.count() + 1}"
        _client, key = api_client_create(name=name, scopes=["games", "payments"])
        http = Http(base_url, key)
        self._wait_for(base_url, wait)
        run = f"{int(time.time())}"
        names = [f"sim-player-{run}-{n}" for n in range(1, players + 1)]
        for p in names:  # cash through the deposits endpoint, like the payment gateway
            http.post(f"players/{p}/deposits", {"amount": "5000.00", "reference": f"sim-{p}"})
            chips_grant(player_external_id=p, amount=Money("100000.00", CHIPS), reference=p)
        templates = http.get("templates")["templates"]
        sim = Simulator(http, names, seed=seed, say=self.stdout.write)
        self.stdout.write(f"Simulating {rounds} game(s) of each of {len(templates)} templates")
        for _ in range(rounds):
            for template in templates:
                sim.play(template)
        self._summary(sim)

    def _wait_for(self, base_url: str, wait: float) -> None:
        deadline = time.monotonic() + wait
        while True:
            try:
                urllib.request.urlopen(f"{base_url.rstrip('/')}/api/schema/", timeout=2)
                return
            except urllib.error.HTTPError:
                return  # it answers
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    def _summary(self, sim: Simulator) -> None:
        w = self.stdout.write
        w("")
        w(
            f"{'template':<18}{'games':>6}{'deals':>7}{'rejoins':>8}{'splits':>7}"
            f"{'collected':>13}{'paid out':>13}{'refunded':>13}{'fee':>11}"
        )
        for slug, t in sorted(sim.tallies.items()):
            w(
                f"{slug:<18}{t.games:>6}{t.deals:>7}{t.rejoins:>8}{t.splits:>7}"
                f"{t.collected:>13}{t.paid_out:>13}{t.refunded:>13}{t.fee:>11}"
            )
        unbalanced = [g for t in sim.tallies.values() for g in t.unbalanced]
        problems = list(unbalanced)
        with connection.cursor() as cursor:
            for label, sql in LEDGER_CHECKS.items():
                cursor.execute(sql)
                problems += [f"{label}: {row[0]}" for row in cursor.fetchall()]
        open_escrow = (
            Game.objects.exclude(status=Game.Status.OPEN)
            .exclude(escrow__balance=Decimal(0))
            .values_list("game_id", flat=True)
        )
        problems += [f"finished game with money left in escrow: {g}" for g in open_escrow]
        if problems:
            w(self.style.ERROR("Books do NOT balance:\n  " + "\n  ".join(problems[:20])))
        else:
            w(
                self.style.SUCCESS(
                    "Books balance: every game paid out + refunded + fee == collected, every "
                    "transfer sums to zero, cached balances == entries, escrows of closed games "
                    "are empty."
                )
            )
