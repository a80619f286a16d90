"""`manage.py flow_report`: the one-way-flow report now (chip dumping); one line per flagged
pair. Exit status 0 either way: a flagged pair is for finance to judge, not a fault."""

from django.core.management.base import BaseCommand

from wallets.models import FlowReport
from wallets.services.flows import flow_report_run


class Command(BaseCommand):
    help = "Flag pairs of players whose money flows one way across repeated games."

    def handle(self, *args, **options):
        report = flow_report_run(trigger=FlowReport.Trigger.COMMAND)
        pairs = report.pairs.select_related("loser", "winner").order_by("-amount")
        self.stdout.write(
            f"report #{report.pk}: {len(pairs)} flagged of {report.pairs_looked_at} pairs "
            f"since {report.since:%Y-%m-%d %H:%M}"
        )
        for pair in pairs:
            self.stdout.write(
                f"  {pair.loser.external_id} -> {pair.winner.external_id}: {pair.amount} INR in "
                f"{pair.games} games, {pair.returned} back"
            )
