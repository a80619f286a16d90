"""A client's webhook endpoints: registered (the URL checked by the address rules, a secret
made), listed, deleted. Each starts reading the client's events from the moment it is made."""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from rummy_ledger.api.models import ApiClient
from rummy_ledger.events.errors import (
    WebhookEndpointKeyConflict,
    WebhookEndpointNotFound,
    WebhookEndpointsFull,
)
from rummy_ledger.events.feed import feed_start
from rummy_ledger.events.models import WebhookEndpoint
from rummy_ledger.events.webhooks.addresses import target_checked


def endpoint_create(
    *, client: ApiClient, url: str, types: Sequence[str], idempotency_key: str = ""
) -> tuple[WebhookEndpoint, bool]:
    """A new endpoint of `client`'s, or (with the same `idempotency_key` and body) the one made
    before: (endpoint, created)."""
    if idempotency_key:
        made = _made_before(client, idempotency_key, url, types)
        if made is not None:
            return made, False
    target_checked(url)
    with transaction.atomic():
        live = WebhookEndpoint.objects.select_for_update().filter(
            client=client, deleted_at__isnull=True
        )
        if len(live) >= settings.WEBHOOK_ENDPOINTS_MAX:
            raise WebhookEndpointsFull(
                f"a client has at most {settings.WEBHOOK_ENDPOINTS_MAX} endpoints: delete one",
                details={"max": settings.WEBHOOK_ENDPOINTS_MAX},
            )
        start = feed_start()
        try:
            with transaction.atomic():
                endpoint = WebhookEndpoint.objects.create(
                    client=client,
                    url=url,
                    types=list(types),
                    secret=f"whsec_{secrets.token_hex(24)}",
                    idempotency_key=idempotency_key,
                    txid=start.txid,
                    event_id=start.row_id,
                )
        except IntegrityError:  # the same key, made by a concurrent request
            made = _made_before(client, idempotency_key, url, types)
            if made is None:
                raise
            return made, False
    return endpoint, True


def _made_before(
    client: ApiClient, key: str, url: str, types: Sequence[str]
) -> WebhookEndpoint | None:
    made = WebhookEndpoint.objects.filter(client=client, idempotency_key=key).first()
    if made is not None and (made.url, made.types) != (url, list(types)):
        raise WebhookEndpointKeyConflict(
            "this Idempotency-Key made an endpoint with another URL or types",
            details={"endpoint_id": made.pk},
        )
    return made


def endpoints_of(*, client: ApiClient) -> list[WebhookEndpoint]:
    return list(
        WebhookEndpoint.objects.filter(client=client, deleted_at__isnull=True).order_by("pk")
    )


def endpoint_delete(*, client: ApiClient, endpoint_id: int) -> None:
    """Delete one of the client's endpoints: nothing more is sent to it."""
    deleted = WebhookEndpoint.objects.filter(
        client=client, pk=endpoint_id, deleted_at__isnull=True
    ).update(deleted_at=timezone.now())
    if not deleted:
        raise WebhookEndpointNotFound(f"no webhook endpoint {endpoint_id}")
