"""The feed's and the webhook endpoints' input and answers."""

from __future__ import annotations

from typing import Any

from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from rummy_ledger.api.fields import StrictCharField, StrictSerializer
from rummy_ledger.api.paging import LimitField, PageQuery
from rummy_ledger.events.event_types import EventType
from rummy_ledger.events.feed import CURSOR, FeedEvent
from rummy_ledger.events.models import WebhookEndpoint

URL_MAX = 2000


class EventsQuery(PageQuery):
    after = StrictCharField(
        required=False,
        validators=[RegexValidator(f"^{CURSOR}\\Z", "A cursor is the `next` of a page.")],
    )
    limit = LimitField(required=False, default=100)


def event_out(event: FeedEvent) -> dict[str, Any]:
    return {
        "id": event.id,
        "type": event.type,
        "created_at": event.created_at.isoformat(),
        "data": event.data,
    }


class EventOut(serializers.Serializer):
    id = serializers.IntegerField(help_text="The event's id: receivers dedupe on it.")
    type = serializers.CharField(
        help_text="What happened: " + ", ".join(f"`{t}`" for t in EventType) + " (more may be "
        "added: ignore a type you do not know)."
    )
    created_at = serializers.DateTimeField(help_text="When the change was made (UTC).")
    data = serializers.DictField(
        help_text="The object as the API answers it at that change: a deal as `GET /games/{id}` "
        "shows it plus `game_id`; a game as `GET /games/{id}`; a deposit as its POST answers; a "
        "withdrawal as `GET /withdrawals/{id}`; a tournament as `GET /tournaments/{slug}`."
    )


class EventsOut(serializers.Serializer):
    events = EventOut(many=True, help_text="The client's events, oldest first.")
    next = serializers.CharField(
        help_text="The cursor to read on from (pass it as `after`); the same cursor when nothing "
        "is new. Never null."
    )


@extend_schema_field(
    {
        "type": "array",
        "items": {"type": "string", "enum": [t.value for t in EventType]},
        "minItems": 1,
        "maxItems": len(EventType),
        "uniqueItems": True,
    }
)
class EventTypesField(serializers.ListField):
    child = serializers.ChoiceField(choices=[t.value for t in EventType])

    def __init__(self, **kwargs):
        super().__init__(min_length=1, max_length=len(EventType), **kwargs)

    def to_internal_value(self, data):
        types = super().to_internal_value(data)
        if len(set(types)) != len(types):
            raise serializers.ValidationError("Each type once.")
        return types


class EndpointIn(StrictSerializer):
    url = StrictCharField(max_length=URL_MAX, help_text="https to a public address.")
    types = EventTypesField(help_text="The event types to send there.")


def endpoint_out(endpoint: WebhookEndpoint, *, secret: bool = False) -> dict[str, Any]:
    out = {
        "id": endpoint.pk,
        "url": endpoint.url,
        "types": endpoint.types,
        "created_at": endpoint.created_at.isoformat(),
        "disabled_at": endpoint.disabled_at.isoformat() if endpoint.disabled_at else None,
    }
    return {**out, "secret": endpoint.secret} if secret else out


class EndpointOut(serializers.Serializer):
    id = serializers.IntegerField(help_text="The endpoint's id (`DELETE` takes it).")
    url = serializers.CharField(help_text="Where the events are POSTed.")
    types = serializers.ListField(
        child=serializers.CharField(), help_text="The event types sent there."
    )
    created_at = serializers.DateTimeField(help_text="When it was registered (UTC).")
    disabled_at = serializers.DateTimeField(
        allow_null=True,
        help_text="When deliveries to it stopped after failing for 24 hours (null: it is sent to).",
    )


class EndpointCreatedOut(EndpointOut):
    secret = serializers.CharField(
        help_text="The signing secret (`Rummy-Signature`), shown only in this answer."
    )


class EndpointsOut(serializers.Serializer):
    endpoints = EndpointOut(many=True, help_text="The client's endpoints, oldest first.")
