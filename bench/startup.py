"""The benchmarks' common start-up: Django set up on this checkout's settings, the embedded
PostgreSQL started (or attached to) first when `RUMMY_EMBEDDED=1` and no DATABASE_URL is set
(`rummy_ledger/dev/environment.py`; a benchmark names its own database with
EMBEDDED_DATABASE_NAME before calling this)."""

import os


def django_start() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rummy_ledger.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    from rummy_ledger.dev.environment import environ_prepare

    environ_prepare()  # a no-op without RUMMY_EMBEDDED=1
    import django

    django.setup()
