"""What every endpoint of the apps stands on: a view for the clients whose key carries one of its
scopes, and the one way a request body is validated."""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.serializers import Serializer
from rest_framework.views import APIView

from rummy_ledger.api.auth import HasScope
from rummy_ledger.api.models import ApiClient


# An endpoint open to the clients whose key carries one of `required_scopes` (401 without a key,
# 403 without the scope); `client` is the caller. (No docstring: the schema would take it as the
# description of every operation.)
class ScopedView(APIView):
    permission_classes = [HasScope]
    required_scopes: tuple[str, ...] = ()

    @property
    def client(self) -> ApiClient:
        return self.request.auth


def valid_data(serializer_class: type[Serializer], request: Request) -> dict[str, Any]:
    """The request body as the input serializer accepts it (a 400 in the envelope if not)."""
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
