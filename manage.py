#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rummy_ledger.settings")
    if os.environ.get("RUMMY_EMBEDDED", "").lower() in {"1", "true", "yes", "on"}:
        # A development checkout: start (or attach to) the embedded PostgreSQL and hand its and
        # the embedded Redis's addresses to the settings, and to every process started from here.
        from rummy_ledger.dev.environment import environ_prepare

        environ_prepare()
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
