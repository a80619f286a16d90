"""`manage.py embedded start|stop|status`: the embedded PostgreSQL and Redis of this checkout.

`start` brings them up, e.g. after a crash while nothing supervises them; PostgreSQL then stays up
until `stop`, or until the last process that attached to it later exits. `stop` stops both even if
killed processes left handles behind (`make stop`). `status` exits 3 when either is not running.
"""

from django.conf import settings
from django.core.management.base import BaseCommand

from rummy_ledger.dev import embedded

NOT_RUNNING = 3


class Command(BaseCommand):
    help = "Start, stop or show the embedded PostgreSQL and Redis of this checkout."

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["start", "stop", "status"])

    def handle(self, *args, action: str, **options):
        data_dir = settings.DATA_DIR
        if action == "stop":
            embedded.stop_redis(data_dir)
            embedded.stop_postgres(data_dir)
            self.stdout.write(f"Stopped the embedded services under {data_dir}.")
        elif action == "start":
            started = embedded.ensure_postgres(data_dir, keep_running=True)
            self._line("PostgreSQL", embedded.postgres_pid(data_dir), started)
            started = embedded.ensure_redis(data_dir, keep_running=True)
            self._line("Redis", embedded.redis_pid(data_dir), started)
        else:
            # manage.py's start-up may just have started PostgreSQL: report what was found.
            pg = (
                embedded.postgres_pid(data_dir)
                if embedded.postgres_found_running(data_dir)
                else None
            )
            redis = embedded.redis_pid(data_dir)
            self._line("PostgreSQL", pg)
            self._line("Redis", redis)
            if pg is None or redis is None:
                raise SystemExit(NOT_RUNNING)

    def _line(self, name: str, pid: int | None, started: bool = False) -> None:
        data_dir = settings.DATA_DIR
        if pid is None:
            self.stdout.write(f"{name}: not running (data under {data_dir})")
        else:
            state = "started" if started else "running"
            self.stdout.write(f"{name}: {state}, pid {pid} (data under {data_dir})")
