"""The events' tables: the outbox (`Event`), how far the purge went (`PurgedThrough`), and the
webhooks: a client's endpoints and their deliveries (the deliveries are the delivery queue)."""

from django.contrib.postgres.indexes import BrinIndex
from django.db import models
from django.db.models import Q

from rummy_ledger.api.models import ApiClient
from rummy_ledger.commit_order import Xid8Field
from rummy_ledger.events.event_types import EventType


class JsonTextField(models.JSONField):
    """PostgreSQL's `json`, not `jsonb`: an event's data is written once and read whole, never
    looked into by a query, and `json` keeps the text as sent (checked, not parsed into jsonb's
    tree), which settlement writes for every deal it settles."""

    def db_type(self, connection) -> str:
        return "json"

    def from_db_value(self, value, expression, connection):
        # psycopg parses `json` itself (Django leaves only `jsonb` as text for JSONField)
        return (
            value
            if not isinstance(value, str)
            else super().from_db_value(value, expression, connection)
        )


class Event(models.Model):
    """One change a client's integrator hears about. `txid` is the writing transaction's id
    (`pg_current_xact_id()`): the feed reads in (txid, id) order and never past the oldest
    transaction still running, so an event that commits late is never skipped (rummy_ledger/
    events/feed.py)."""

    id = models.BigAutoField(primary_key=True)
    txid = Xid8Field(db_default=models.Func(function="pg_current_xact_id"), editable=False)
    # the feed's index leads with the client: no index of its own
    client = models.ForeignKey(
        ApiClient, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    type = models.CharField(max_length=40, choices=EventType.choices)
    created_at = models.DateTimeField(db_default=models.Func(function="now"))
    data = JsonTextField()

    class Meta:
        indexes = [
            models.Index(fields=["client", "txid", "id"], name="event_client_feed"),
            # the purge's: rows are appended in time order, so a BRIN index (a few pages, next to
            # nothing to maintain per insert) finds the old ones
            BrinIndex(fields=["created_at"], name="event_created"),
        ]

    def __str__(self) -> str:
        return f"{self.type} #{self.pk}"


class PurgedThrough(models.Model):
    """One row: the last event (in feed order) the retention purge deleted. A cursor before it
    may have missed events: 410 `cursor_expired`."""

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    txid = models.BigIntegerField()
    event_id = models.BigIntegerField()

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(id=1), name="purged_through_one_row")]

    def __str__(self) -> str:
        return f"purged through {self.txid}-{self.event_id}"


class WebhookEndpoint(models.Model):
    """Where a client wants its events of `types` POSTed, signed with `secret`. The endpoint
    reads the client's events as the feed does, from its own cursor (`txid`, `event_id`): each
    event read becomes a delivery. Disabled when it has failed for WEBHOOK_RETRY_HOURS."""

    client = models.ForeignKey(ApiClient, on_delete=models.PROTECT, related_name="+")
    url = models.CharField(max_length=2000)
    types = models.JSONField()
    secret = models.CharField(max_length=80)
    created_at = models.DateTimeField(auto_now_add=True)
    idempotency_key = models.CharField(max_length=255, blank=True, default="")
    deleted_at = models.DateTimeField(null=True, blank=True)
    disabled_at = models.DateTimeField(null=True, blank=True)
    # the feed position read so far (events after it become deliveries)
    txid = models.BigIntegerField()
    event_id = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["client", "idempotency_key"],
                condition=~Q(idempotency_key=""),
                name="webhook_endpoint_key_once",
            ),
        ]
        indexes = [
            models.Index(
                fields=["client"],
                condition=Q(deleted_at__isnull=True, disabled_at__isnull=True),
                name="webhook_endpoint_live",
            )
        ]

    def __str__(self) -> str:
        return f"{self.client} → {self.url}"

    @property
    def live(self) -> bool:
        return self.deleted_at is None and self.disabled_at is None


class Delivery(models.Model):
    """One event to one endpoint: pending until a 2xx answer (delivered) or until it has been
    tried for WEBHOOK_RETRY_HOURS (failed). The pending rows are the delivery queue: a run
    claims the due ones `FOR UPDATE SKIP LOCKED` and leases them (`due_at` moved past the
    request's timeout), so no transaction stays open while a receiver answers."""

    class Status(models.TextChoices):
        PENDING = "pending"
        DELIVERED = "delivered"
        FAILED = "failed"

    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="+")
    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    created_at = models.DateTimeField(auto_now_add=True)
    due_at = models.DateTimeField()
    # retried until WEBHOOK_RETRY_HOURS after this: its making, or finance's redeliver
    retries_since = models.DateTimeField()
    attempts = models.PositiveIntegerField(default=0)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    last_status = models.PositiveSmallIntegerField(null=True, blank=True)
    last_answer = models.CharField(max_length=500, blank=True, default="")
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "deliveries"
        permissions = [("redeliver_delivery", "Can redeliver a webhook delivery")]
        constraints = [
            models.UniqueConstraint(fields=["endpoint", "event"], name="delivery_once"),
        ]
        indexes = [
            models.Index(
                fields=["due_at"],
                condition=Q(status="pending"),
                name="delivery_due",
            )
        ]

    def __str__(self) -> str:
        return f"delivery #{self.pk}"
