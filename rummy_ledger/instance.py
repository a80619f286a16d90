"""Every response names the `serve` run that answers it.

`manage.py serve` draws a random token per run and gives it to its web process in the
environment; a client it started (the demo simulator) checks the header and refuses to play
against any other server that happens to answer on the same address. Without the variable (any
other deployment) the middleware is left out of the chain.
"""

import os

from django.core.exceptions import MiddlewareNotUsed

ENV = "RUMMY_INSTANCE_TOKEN"
HEADER = "X-Rummy-Instance"


class InstanceHeaderMiddleware:
    def __init__(self, get_response):
        self.token = os.environ.get(ENV)
        if not self.token:
            raise MiddlewareNotUsed
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        response[HEADER] = self.token
        return response
