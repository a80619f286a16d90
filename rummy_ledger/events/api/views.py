"""The feed and the webhook endpoints: open to `games` and `payments` clients, each its own."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from rummy_ledger import commit_order
from rummy_ledger.api.fields import StrictSerializer
from rummy_ledger.api.idempotency import HEADER, IDEMPOTENCY_HEADER_OPTIONAL, key_read
from rummy_ledger.api.paging import LIMIT_PARAMETER, after_parameter, query_read
from rummy_ledger.api.schema import error_codes
from rummy_ledger.api.views import ScopedView, valid_data
from rummy_ledger.events import feed
from rummy_ledger.events.api import serializers as s
from rummy_ledger.events.errors import EventErrorCode as E
from rummy_ledger.events.webhooks import endpoints

CURSOR_PARAMETER = after_parameter(
    feed.CURSOR, "74211-1893", "the feed starts at its oldest event kept"
)


class EventsScope(ScopedView):
    required_scopes = ("games", "payments")


class EventsView(EventsScope):
    @extend_schema(
        responses=s.EventsOut,
        parameters=[CURSOR_PARAMETER, LIMIT_PARAMETER],
        summary="This client's events, oldest first, from a cursor",
        extensions=error_codes({410: [E.CURSOR_EXPIRED]}),
    )
    def get(self, request):
        query = query_read(s.EventsQuery, request)
        given = query.get("after")
        after = commit_order.START if given is None else feed.cursor_parsed(given)
        if after is None:
            raise serializers.ValidationError({"after": ["A cursor is the `next` of a page."]})
        events = feed.events_after(
            client_id=self.client.pk,
            after=after,
            limit=query["limit"],
            expired_ok=given is None,  # from the start: the oldest event kept
        )
        next_cursor = str(events[-1].cursor) if events else (given or str(after))
        return Response({"events": [s.event_out(e) for e in events], "next": next_cursor})


class EndpointsView(EventsScope):
    @extend_schema(
        responses=s.EndpointsOut,
        summary="This client's webhook endpoints (no secrets)",
        operation_id="v1_webhook_endpoints_list",
    )
    def get(self, request):
        listed = endpoints.endpoints_of(client=self.client)
        return Response({"endpoints": [s.endpoint_out(e) for e in listed]})

    @extend_schema(
        request=s.EndpointIn,
        responses={201: s.EndpointCreatedOut, 200: s.EndpointOut},
        parameters=[IDEMPOTENCY_HEADER_OPTIONAL],
        summary="Register a webhook endpoint: its secret is in this answer only (a replay "
        "answers 200 without it)",
        extensions=error_codes({409: [E.WEBHOOK_ENDPOINTS_FULL], 422: [E.WEBHOOK_URL_INVALID]}),
    )
    def post(self, request):
        key = key_read(request) if HEADER in request.headers else ""
        data = valid_data(s.EndpointIn, request)
        endpoint, created = endpoints.endpoint_create(
            client=self.client, url=data["url"], types=data["types"], idempotency_key=key
        )
        if created:
            return Response(s.endpoint_out(endpoint, secret=True), status=status.HTTP_201_CREATED)
        return Response(s.endpoint_out(endpoint), status=status.HTTP_200_OK)


class EndpointView(EventsScope):
    @extend_schema(
        request=None,
        responses={204: None},
        summary="Delete a webhook endpoint: nothing more is sent to it",
        extensions=error_codes({404: [E.WEBHOOK_ENDPOINT_NOT_FOUND]}),
    )
    def delete(self, request, endpoint_id: int):
        valid_data(StrictSerializer, request)  # no body, or an empty one
        endpoints.endpoint_delete(client=self.client, endpoint_id=endpoint_id)
        return Response(status=status.HTTP_204_NO_CONTENT)
