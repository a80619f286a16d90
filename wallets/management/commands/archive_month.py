"""`manage.py archive_month 2025-01 --by USER [--restore]`: take a closed month's entries out of
the ledger into a checked, compressed file (`LEDGER_ARCHIVE_DIR`), or put them back from it
(`wallets.services.archives`)."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from rummy_ledger.errors import DomainError
from wallets.services.archives import month_archive, month_restore


class Command(BaseCommand):
    help = (
        "Archive a closed IST month older than LEDGER_ARCHIVE_AFTER_MONTHS (the oldest not "
        "archived): its entries go to a gzip file, proved against its close before the "
        "partition is dropped. --restore puts the newest archived month back from its file, "
        "refusing a file that does not match its record."
    )

    def add_arguments(self, parser):
        parser.add_argument("month", help="the IST month, YYYY-MM")
        parser.add_argument(
            "--by", required=True, metavar="USERNAME", help="the member of staff doing it"
        )
        parser.add_argument("--restore", action="store_true", help="put the month back")

    def handle(self, *args, month: str, by: str, restore: bool, **options):
        user = get_user_model().objects.filter(username=by, is_staff=True, is_active=True).first()
        if user is None:
            raise CommandError(f"--by names an active member of staff, not {by!r}")
        try:
            if restore:
                archive = month_restore(month=month, restored_by=user)
                self.stdout.write(f"{archive.month} restored: {archive.rows} entries back")
                return
            archive = month_archive(month=month, archived_by=user)
        except DomainError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"{archive.month} archived: {archive.rows} entries in {archive.path} "
            f"(sha256 {archive.sha256})"
        )
