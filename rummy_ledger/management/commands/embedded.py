from django.conf import settings
from django.core.management.base import BaseCommand

from rummy_ledger import embedded


class Command(BaseCommand):
    help = "Stop the embedded PostgreSQL and Redis of this checkout (`make stop`)."

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["stop"])

    def handle(self, *args, action: str, **options):
        embedded.stop_redis(settings.DATA_DIR)
        embedded.stop_postgres(settings.DATA_DIR)
        self.stdout.write(f"Stopped the embedded services under {settings.DATA_DIR}.")
