"""`manage.py verify_ledger [--since DATE]`: bring the ledger's hash chain up to every committed
transfer (as its job would), then recompute it and compare; check every archived month's file
against its record and its close (`wallets.services.archives`: the transfers of an archived
month are recomputed from that file); exit 1 naming the first transfer (and deal) that differs,
or the archive."""

import sys
import time
from datetime import date

from django.core.management.base import BaseCommand, CommandError

from rummy_ledger.db import snapshot
from wallets.chain.links import chain_extend
from wallets.chain.verify import after_day, chain_verify
from wallets.services.archives import archive_check, archives_in_force


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise CommandError(f"--since takes a day, YYYY-MM-DD, not {text!r}") from None


class Command(BaseCommand):
    help = (
        "Chain every committed transfer, then recompute the ledger's hash chain (from its first "
        "link, or from the links chained on and after --since) and compare it with the links and "
        "daily digests; exit 1 naming the first transfer that differs."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--since", type=_day, metavar="DATE", help="verify the links chained on and after "
            "this day (platform time zone), from the digest of the day before"
        )  # fmt: skip

    def handle(self, *args, since: date | None, **options):
        started = time.perf_counter()
        added = chain_extend(wait=True)
        with snapshot():
            result = chain_verify(after=after_day(since))
        archives = list(archives_in_force().order_by("month"))
        archived = [found for archive in archives for found in archive_check(archive)]
        seconds = time.perf_counter() - started
        self.stdout.write(
            f"chained {added} new transfers; verified links {result.after + 1}-{result.through} "
            f"({result.checked} links, {result.digests} digests) and {len(archives)} archived "
            f"months in {seconds:.1f} s"
        )
        if result.clean and not archived:
            self.stdout.write("the chain verifies clean")
            return
        for difference in [*archived, *result.differences]:
            self.stderr.write(str(difference))
        if result.found > len(result.differences):
            self.stderr.write(f"... {result.found - len(result.differences)} more")
        first = archived[0] if archived else result.differences[0]
        self.stderr.write(f"FIRST DIFFERENCE: {first}")
        sys.exit(1)
