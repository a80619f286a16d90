"""A web process that pauses inside every withdrawal transaction, right after its first
posting and before the commit, so a test can SIGKILL it there. The pause is patched in here, in
the test's own process: production code has no test switch.

    python -m tests.wallets.slow_web PORT SECONDS
It prints `paused` when it is inside the transaction.
"""

import sys
import time
from wsgiref.simple_server import WSGIRequestHandler, make_server

import django


class Quiet(WSGIRequestHandler):
    def log_message(self, *args) -> None:
        pass


def main() -> None:
    port, seconds = int(sys.argv[1]), float(sys.argv[2])
    django.setup()
    from django.core.wsgi import get_wsgi_application

    from wallets.services import withdrawals

    post = withdrawals.transfers_post

    def post_then_pause(**kwargs):
        posted = post(**kwargs)
        print("paused", flush=True)
        time.sleep(seconds)
        return posted

    withdrawals.transfers_post = post_then_pause
    server = make_server("127.0.0.1", port, get_wsgi_application(), handler_class=Quiet)
    print("listening", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
