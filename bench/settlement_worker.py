"""The Celery worker of `bench/settlement.py --outbox-rounds` for its rounds without the outbox:
the product's worker, with the settlement's events not recorded (no rendering, no COPY, no wake
of the deliveries), so the rounds with and without differ by the outbox alone.

Run by bench/settlement.py as `python bench/settlement_worker.py <celery worker arguments>`.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rummy_ledger.settings")

import django

django.setup()

from celery.__main__ import main  # noqa: E402

from tournaments.games.services import settlement  # noqa: E402

settlement.events_record = lambda events: None

if __name__ == "__main__":
    sys.argv = ["celery", *sys.argv[1:]]
    main()
