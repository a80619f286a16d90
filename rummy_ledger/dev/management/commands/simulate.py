"""`manage.py simulate`: a game-server simulator playing real games over HTTP against a running
service (and the payment gateway: deposits, KYC, withdrawals; and the demo lobby: the demo
tournaments, with the demo key), then a summary per template and per tournament and a check
that the books balance. It plays the templates and tournaments the service lists as available:
with real money off, chips only (and it says so)."""

import time
import urllib.error
import urllib.request
from collections import Counter

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from djmoney.money import Money

from rummy_ledger.api.keys import api_client_rekey
from rummy_ledger.api.models import ApiClient
from rummy_ledger.dev.demo.simulator import Http, Simulator, WrongServer
from rummy_ledger.dev.demo.simulator_money import PaymentGateway
from rummy_ledger.dev.demo.simulator_tournaments import TournamentLobby, TournamentTally
from rummy_ledger.dev.demo.tournaments import demo_kind
from rummy_ledger.dev.management.commands.seed_demo import DEMO_CLIENT, demo_key
from tournaments.models import TournamentEscrow
from wallets.models import CHIPS, Account, ReconciliationReport, WithdrawalReview
from wallets.reconciliation import reconcile_run
from wallets.roles import APPROVER, OPERATOR, roles_ensure
from wallets.services.deposits import chips_grant
from wallets.services.proposals import proposal_decide
from wallets.services.real_money import demo_region
from wallets.services.withdrawals import withdrawal_review_propose


class Command(BaseCommand):
    help = "Play a stream of real games over HTTP against a running service."

    def add_arguments(self, parser):
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")
        parser.add_argument("--rounds", type=int, default=3, help="games per template")
        parser.add_argument("--players", type=int, default=12)
        parser.add_argument("--seed", type=int, default=None)
        parser.add_argument("--wait", type=float, default=60, help="seconds to wait for the web")
        parser.add_argument(
            "--instance",
            help="the server's instance token (X-Rummy-Instance): refuse to play against any other",
        )

    def handle(self, *args, base_url, rounds, players, seed, wait, instance, verbosity, **options):
        probe = Http(base_url, "", instance=instance)
        try:
            self._wait_for(probe, base_url, wait)
        except WrongServer as exc:
            raise CommandError(f"Not simulating: {exc}.") from None
        call_command("seed_games", verbosity=0)
        # one simulator client, its key replaced on every run (the last run's stops working)
        _client, key = api_client_rekey(name="simulator", scopes=["games", "payments"])
        http = Http(base_url, key, instance=instance)
        run = f"{int(time.time())}"
        names = [f"sim-player-{run}-{n}" for n in range(1, players + 1)]
        gateway = PaymentGateway(http, seed=seed)
        listed = http.get("templates")["templates"]
        templates = [t for t in listed if t["available"]]
        if any(t["currency"] != CHIPS for t in templates):
            region = self._region()
            gateway.fund(names, region=region)  # cash through the deposits endpoint, GST taken
        else:
            reasons = sorted({t["unavailable_reason"] for t in listed if not t["available"]})
            self.stdout.write(
                f"Real money is off ({'; '.join(reasons)}): playing chips games only, no deposits."
            )
        gateway.verify(names)
        for p in names:
            chips_grant(player_external_id=p, amount=Money("100000.00", CHIPS), reference=p)
        # a line per game at -v 2 (serve passes it under LOG_LEVEL=DEBUG), the summary always
        say = self.stdout.write if verbosity > 1 else lambda line: None
        sim = Simulator(http, names, seed=seed, say=say)
        self.stdout.write(f"Simulating {rounds} game(s) of each of {len(templates)} templates")
        for _ in range(rounds):
            for template in templates:
                sim.play(template)
        played = self._tournaments(base_url, instance, names, seed, say)
        gateway.cash_out(names, approve=finance_approves())
        self._summary(sim, gateway, played)

    def _tournaments(self, base_url, instance, names, seed, say) -> list[TournamentTally]:
        """The demo tournaments registering for the demo lobby (seed_tournaments schedules new
        ones when none is), played with the demo key; none without the demo data."""
        key = demo_key()
        if not key or not ApiClient.objects.filter(name=DEMO_CLIENT, is_active=True).exists():
            self.stdout.write("No demo lobby (seed_demo makes it): no tournaments played.")
            return []
        call_command("seed_tournaments", verbosity=0)
        lobby = TournamentLobby(Http(base_url, key, instance=instance), names, seed=seed, say=say)
        listed = lobby.http.get("tournaments")["tournaments"]
        ours = [t for t in listed if t["status"] == "registering" and demo_kind(t["slug"])]
        for t in ours:
            if not t["available"]:
                self.stdout.write(f"Not playing tournament {t['slug']}: {t['unavailable_reason']}")
        return [lobby.play(t["slug"], demo_kind(t["slug"])) for t in ours if t["available"]]

    def _region(self) -> str:
        """Where real money is restricted, the simulated players come from a region that is
        not blocked (and the simulator says which); elsewhere their region is not needed."""
        region = demo_region()
        if not region:
            return ""
        blocked = ", ".join(sorted(settings.REAL_MONEY_BLOCKED_REGIONS)) or "none"
        self.stdout.write(
            f"Real money is restricted (blocked regions: {blocked}): the simulated players "
            f"deposit from {region}."
        )
        return region

    def _wait_for(self, probe: Http, base_url: str, wait: float) -> None:
        url = f"{base_url.rstrip('/')}/api/schema/"
        deadline = time.monotonic() + wait
        while True:
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    probe.check_instance(response.headers, url)
                return
            except urllib.error.HTTPError as exc:  # it answers
                probe.check_instance(exc.headers, url)
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    def _summary(
        self, sim: Simulator, gateway: PaymentGateway, played: list[TournamentTally]
    ) -> None:
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
        for t in played:
            w(f"Tournament {t.line()}")
        for line in gateway.summary():
            w(line)
        refused = sum((t.rejoins_refused for t in sim.tallies.values()), Counter())
        if refused:
            codes = ", ".join(f"{n} {code}" for code, n in sorted(refused.items()))
            w(
                f"Expected refusals: {refused.total()} pool rejoins answered 409 ({codes}): the "
                "simulator asks for one at random, and the pool's rules refuse it once a score "
                "has reached the rejoin limit. They are the web's `Conflict: .../rejoin` lines."
            )
        problems = [g for t in sim.tallies.values() for g in t.unbalanced]
        problems += [p for t in played for p in t.unbalanced] + escrows_left(played)
        report = reconcile_run(trigger=ReconciliationReport.Trigger.COMMAND)
        problems += [f"{d.kind}: {d.subject}" for d in report.discrepancies.order_by("kind")[:20]]
        if report.status == ReconciliationReport.Status.FAILED:
            problems.append(f"reconciliation failed: {report.error}")
        if problems:
            w(self.style.ERROR("Books do NOT balance:\n  " + "\n  ".join(problems[:20])))
        else:
            w(
                self.style.SUCCESS(
                    "Books balance: every game paid out + refunded + fee == collected, every "
                    f"tournament ({len(played)}) prizes + fee == collected + overlay with its "
                    "escrow empty and each player's balance moved by prize - entry - rebuys, and "
                    f"reconciliation #{report.pk} is clean (cached balances == entries, every "
                    "transfer and currency sums to zero, escrows of closed games are empty, GST "
                    "and TDS payable match the deposits and withdrawals)."
                )
            )


def escrows_left(played: list[TournamentTally]) -> list[str]:
    """The played tournaments whose escrow shards still hold money (none should)."""
    escrows = TournamentEscrow.objects.filter(tournament__slug__in=[t.slug for t in played])
    accounts = Account.objects.filter(pk__in=escrows.values("account_id")).order_by("code")
    return [f"escrow {a.code} holds {a.balance}" for a in accounts if a.balance.amount]


def finance_approves():
    """Finance's part, in-process (it is admin work, not HTTP): an operator reviews a waiting
    withdrawal, an approver approves it (two staff users of the simulator's own)."""
    roles_ensure()
    staff = {}
    for role, group in (("operator", OPERATOR), ("approver", APPROVER)):
        user, _ = User.objects.get_or_create(
            username=f"simulator-{role}", defaults={"is_staff": True}
        )
        user.groups.add(Group.objects.get(name=group))
        staff[role] = User.objects.get(pk=user.pk)  # fresh permission cache

    def approve(withdrawal_id: int) -> None:
        review = withdrawal_review_propose(
            proposed_by=staff["operator"], withdrawal_id=withdrawal_id, reason="simulated review"
        )
        proposal_decide(
            model=WithdrawalReview,
            proposal_id=review.pk,
            decided_by=staff["approver"],
            approve=True,
        )

    return approve
