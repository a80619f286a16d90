"""The events' and webhooks' refusals and their codes (the API's catalogue)."""

from enum import StrEnum

from rummy_ledger.api.codes import ApiErrorCode
from rummy_ledger.errors import Conflict, DomainError, NotFound, Unprocessable


class EventErrorCode(StrEnum):
    CURSOR_EXPIRED = "cursor_expired"
    WEBHOOK_URL_INVALID = "webhook_url_invalid"
    WEBHOOK_ENDPOINT_NOT_FOUND = "webhook_endpoint_not_found"
    WEBHOOK_ENDPOINTS_FULL = "webhook_endpoints_full"


class CursorExpired(DomainError):
    """The events after this cursor were partly purged (older than EVENTS_RETENTION_DAYS)."""

    status = 410
    code = EventErrorCode.CURSOR_EXPIRED


class WebhookUrlInvalid(Unprocessable):
    code = EventErrorCode.WEBHOOK_URL_INVALID


class WebhookEndpointNotFound(NotFound):
    code = EventErrorCode.WEBHOOK_ENDPOINT_NOT_FOUND


class WebhookEndpointsFull(Conflict):
    code = EventErrorCode.WEBHOOK_ENDPOINTS_FULL


class WebhookEndpointKeyConflict(Conflict):
    code = ApiErrorCode.IDEMPOTENCY_CONFLICT
