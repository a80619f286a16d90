"""Deliveries: the table is the queue (as settlement's stored deals are).

`deliveries_run`, the body of the Celery task `rummy_ledger.events.tasks.deliver_waiting`:
1. each live endpoint reads the client's events after its cursor as the feed does (never past
   the oldest running transaction) and each event of its types becomes a pending delivery, the
   cursor moved on in the same transaction (the endpoint row claimed `SKIP LOCKED`);
2. due deliveries are claimed `FOR UPDATE SKIP LOCKED` and leased (`due_at` moved
   WEBHOOK_LEASE_SECONDS on, one attempt counted) in a short transaction, then POSTed with no
   transaction open; a worker killed meanwhile leaves them due again when the lease ends;
3. the batch's answers are written back in one statement: 2xx delivered; anything else (or
   none within WEBHOOK_TIMEOUT_SECONDS) due again after a backoff (WEBHOOK_RETRY_FIRST_SECONDS,
   tripled each time up to WEBHOOK_RETRY_MAX_SECONDS); after WEBHOOK_RETRY_HOURS the delivery
   has failed and, when nothing reached the endpoint meanwhile, the endpoint is disabled
   (finance's home page).

Delivery is at least once: receivers dedupe on the event id.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from rummy_ledger.commit_order import Position
from rummy_ledger.events.errors import WebhookUrlInvalid
from rummy_ledger.events.feed import events_after
from rummy_ledger.events.models import Delivery, Event, WebhookEndpoint
from rummy_ledger.events.webhooks.addresses import Target, target_checked
from rummy_ledger.events.webhooks.signing import signature

EVENTS_A_READ = 500  # events an endpoint turns into deliveries per transaction


def event_body(event: Event) -> bytes:
    """The feed's event object, as sent."""
    return json.dumps(
        {
            "id": event.pk,
            "type": event.type,
            "created_at": event.created_at.isoformat(),
            "data": event.data,
        },
        separators=(",", ":"),
    ).encode()


@dataclass
class Run:
    delivered: int = 0
    failed: int = 0
    claimed: int = 0
    retry_in: float | None = None  # the soonest retry this run scheduled, in seconds


def deliveries_run() -> Run:
    """Fan the endpoints' new events out, then send up to WEBHOOK_RUN_DELIVERIES due
    deliveries, WEBHOOK_CONCURRENCY at a time."""
    deliveries_fan_out()
    run = Run()
    while run.claimed < settings.WEBHOOK_RUN_DELIVERIES:
        claimed = deliveries_claim(limit=settings.WEBHOOK_BATCH)
        if not claimed:
            break
        run.claimed += len(claimed)
        with ThreadPoolExecutor(settings.WEBHOOK_CONCURRENCY) as pool:
            answers = list(pool.map(_attempt, claimed))
        for delivery, answer in zip(claimed, answers, strict=True):
            _outcome(delivery, answer, run)
        _written_back(claimed)
        if len(claimed) < settings.WEBHOOK_BATCH:
            break
    return run


def deliveries_fan_out() -> int:
    """Every live endpoint's new events become its pending deliveries; how many were made."""
    made = 0
    for endpoint_id in WebhookEndpoint.objects.filter(
        deleted_at__isnull=True, disabled_at__isnull=True
    ).values_list("pk", flat=True):
        with transaction.atomic():
            endpoint = (
                WebhookEndpoint.objects.select_for_update(skip_locked=True)
                .filter(pk=endpoint_id, deleted_at__isnull=True, disabled_at__isnull=True)
                .first()
            )
            if endpoint is None:
                continue  # another run has it
            events = events_after(
                client_id=endpoint.client_id,
                after=Position(endpoint.txid, endpoint.event_id),
                limit=EVENTS_A_READ,
                types=endpoint.types,
                expired_ok=True,
            )
            if not events:
                continue
            now = timezone.now()
            Delivery.objects.bulk_create(
                [
                    Delivery(endpoint=endpoint, event_id=e.id, due_at=now, retries_since=now)
                    for e in events
                ],
                ignore_conflicts=True,
            )
            endpoint.txid, endpoint.event_id = events[-1].txid, events[-1].id
            endpoint.save(update_fields=["txid", "event_id"])
            made += len(events)
    return made


CLAIM_SQL = f"""
UPDATE {Delivery._meta.db_table} AS d
   SET due_at = now() + make_interval(secs => %(lease)s), attempts = d.attempts + 1,
       last_attempt_at = now()
 WHERE d.id IN (
       SELECT x.id FROM {Delivery._meta.db_table} AS x
         JOIN {WebhookEndpoint._meta.db_table} AS e ON e.id = x.endpoint_id
        WHERE x.status = 'pending' AND x.due_at <= now()
          AND e.deleted_at IS NULL AND e.disabled_at IS NULL
        ORDER BY x.due_at
        LIMIT %(limit)s
          FOR UPDATE OF x SKIP LOCKED)
RETURNING d.id
"""


def deliveries_claim(*, limit: int) -> list[Delivery]:
    """Due deliveries, leased to this run (one attempt counted each), with their endpoint and
    event; the transaction that claimed them has committed."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(CLAIM_SQL, {"lease": settings.WEBHOOK_LEASE_SECONDS, "limit": limit})
        ids = [row[0] for row in cursor.fetchall()]
    return list(Delivery.objects.filter(pk__in=ids).select_related("endpoint", "event"))


@dataclass(frozen=True)
class Answer:
    status: int | None  # None: no answer (refused, timed out, the address refused)
    text: str

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def _attempt(delivery: Delivery) -> Answer:
    """POST the event to the endpoint, checked and resolved again now (no database here: this
    runs in the run's threads)."""
    endpoint = delivery.endpoint
    try:
        target = target_checked(endpoint.url)
    except WebhookUrlInvalid as exc:
        return Answer(None, exc.message)
    body = event_body(delivery.event)
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "rummy-ledger-webhooks",
        "Rummy-Event-Id": str(delivery.event_id),
        "Rummy-Signature": signature(endpoint.secret, body, int(time.time())),
    }
    return post(target, body, headers)


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """Connects to the address checked, whatever the host's name resolves to now."""

    def __init__(self, target: Target, timeout: float):
        super().__init__(target.host, target.port, timeout=timeout)
        self._address = target.address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPSConnection(_PinnedHTTPConnection):
    """The same over TLS: the certificate checked for the host's name (SNI set to it)."""

    def connect(self) -> None:
        super().connect()
        context = ssl.create_default_context()
        self.sock = context.wrap_socket(self.sock, server_hostname=self.host)


def post(target: Target, body: bytes, headers: dict[str, str]) -> Answer:
    kind = _PinnedHTTPSConnection if target.scheme == "https" else _PinnedHTTPConnection
    conn = kind(target, timeout=settings.WEBHOOK_TIMEOUT_SECONDS)
    try:
        conn.request("POST", target.path, body=body, headers=headers)
        response = conn.getresponse()
        text = response.read(500).decode("utf-8", "replace")
        return Answer(response.status, text)
    except (OSError, http.client.HTTPException) as exc:
        return Answer(None, f"{type(exc).__name__}: {exc}"[:500])
    finally:
        conn.close()


def retry_delay(attempts: int) -> float:
    """Seconds before the next try after `attempts` failed ones."""
    delay = settings.WEBHOOK_RETRY_FIRST_SECONDS * 3 ** (attempts - 1)
    return min(delay, settings.WEBHOOK_RETRY_MAX_SECONDS)


def _outcome(delivery: Delivery, answer: Answer, run: Run) -> None:
    """What the answer makes of the delivery (in memory; `_written_back` stores it)."""
    now = timezone.now()
    delivery.last_status = answer.status
    delivery.last_answer = answer.text[:500]
    if answer.ok:
        delivery.status = Delivery.Status.DELIVERED
        delivery.delivered_at = now
        run.delivered += 1
    elif now - delivery.retries_since >= timedelta(hours=settings.WEBHOOK_RETRY_HOURS):
        delivery.status = Delivery.Status.FAILED
        run.failed += 1
    else:
        delay = retry_delay(delivery.attempts)
        delivery.due_at = now + timedelta(seconds=delay)
        run.retry_in = delay if run.retry_in is None else min(run.retry_in, delay)


WRITE_BACK_SQL = f"""
UPDATE {Delivery._meta.db_table} AS d
   SET status = u.status, due_at = u.due_at, last_status = u.last_status,
       last_answer = u.last_answer, delivered_at = u.delivered_at
  FROM unnest(%(ids)s::bigint[], %(statuses)s::text[], %(due)s::timestamptz[],
              %(last_status)s::int[], %(last_answer)s::text[], %(delivered)s::timestamptz[])
       AS u(id, status, due_at, last_status, last_answer, delivered_at)
 WHERE d.id = u.id AND d.status = 'pending'
"""


def _written_back(deliveries: list[Delivery]) -> None:
    """A batch's outcomes in one statement (and the endpoints of those that failed for good)."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                WRITE_BACK_SQL,
                {
                    "ids": [d.pk for d in deliveries],
                    "statuses": [d.status for d in deliveries],
                    "due": [d.due_at for d in deliveries],
                    "last_status": [d.last_status for d in deliveries],
                    "last_answer": [d.last_answer for d in deliveries],
                    "delivered": [d.delivered_at for d in deliveries],
                },
            )
        for delivery in deliveries:
            if delivery.status == Delivery.Status.FAILED:
                _disable_if_failing(delivery)


def _disable_if_failing(delivery: Delivery) -> None:
    """A delivery gave up: its endpoint is disabled unless something reached it since that
    delivery was made (then it is this receiver's answer to this event, not the endpoint)."""
    reached = Delivery.objects.filter(
        endpoint_id=delivery.endpoint_id, delivered_at__gte=delivery.retries_since
    ).exists()
    if not reached:
        WebhookEndpoint.objects.filter(pk=delivery.endpoint_id, disabled_at__isnull=True).update(
            disabled_at=timezone.now()
        )


def delivery_redeliver(*, delivery_id: int) -> None:
    """Finance's redeliver: the delivery is pending and due now (its endpoint enabled again),
    counted afresh from now for its retries."""
    with transaction.atomic():
        delivery = Delivery.objects.select_for_update().get(pk=delivery_id)
        delivery.status = Delivery.Status.PENDING
        delivery.due_at = timezone.now()
        delivery.retries_since = delivery.due_at
        delivery.save(update_fields=["status", "due_at", "retries_since"])
        WebhookEndpoint.objects.filter(pk=delivery.endpoint_id).update(disabled_at=None)
