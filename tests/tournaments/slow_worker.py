"""A Celery worker that pauses inside every settlement transaction, after the money is posted
and before the commit, so a test can SIGKILL it mid-settlement. The pause is patched in here, in
the test's own process: production code has no test switch.

    python -m tests.tournaments.slow_worker SECONDS <celery worker arguments>
"""

import sys
import time

import django


def main() -> None:
    seconds = float(sys.argv[1])
    django.setup()
    from rummy_ledger.celery import app
    from tournaments.games.services import escrow

    post = escrow.transfers_post  # what `release_post` calls: the settlement's one posting

    def post_then_pause(**kwargs):
        posted = post(**kwargs)
        time.sleep(seconds)
        return posted

    escrow.transfers_post = post_then_pause
    app.worker_main(["worker", *sys.argv[2:]])


if __name__ == "__main__":
    main()
