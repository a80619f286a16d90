"""The API clients' webhook endpoints and their deliveries (rummy_ledger.events): read-only for
every finance role; an operator may redeliver (a delivery that failed, or one to send again now;
a disabled endpoint is enabled again by it). The secret is never shown."""

from __future__ import annotations

from django.contrib import admin, messages
from django.utils.html import format_html

from rummy_ledger.events.models import Delivery, WebhookEndpoint
from rummy_ledger.events.tasks import deliveries_wake
from rummy_ledger.events.webhooks.delivery import delivery_redeliver
from wallets.admin.base import ReadOnlyAdmin
from wallets.admin.dashboard import changelist


class EndpointStateFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request, model_admin):
        return [("live", "sent to"), ("disabled", "disabled"), ("deleted", "deleted")]

    def queryset(self, request, queryset):
        if self.value() == "live":
            return queryset.filter(disabled_at__isnull=True, deleted_at__isnull=True)
        if self.value() == "disabled":
            return queryset.filter(disabled_at__isnull=False, deleted_at__isnull=True)
        if self.value() == "deleted":
            return queryset.filter(deleted_at__isnull=False)
        return queryset


def endpoint_state(endpoint: WebhookEndpoint) -> str:
    if endpoint.deleted_at is not None:
        return "deleted"
    return "disabled" if endpoint.disabled_at is not None else "sent to"


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(ReadOnlyAdmin):
    list_display = ["id", "client", "url", "types_shown", "state", "created_at", "disabled_at"]
    list_filter = [EndpointStateFilter, "client"]
    list_select_related = ["client"]
    search_fields = ["url"]
    fields = ["client", "url", "types", "created_at", "disabled_at", "deleted_at", "deliveries"]
    readonly_fields = fields

    @admin.display(description="types")
    def types_shown(self, obj: WebhookEndpoint) -> str:
        return ", ".join(obj.types)

    @admin.display(description="state")
    def state(self, obj: WebhookEndpoint) -> str:
        return endpoint_state(obj)

    @admin.display(description="deliveries")
    def deliveries(self, obj: WebhookEndpoint) -> str:
        url = changelist(Delivery, endpoint__id__exact=obj.pk)
        return format_html('<a href="{}">its deliveries</a>', url)


@admin.register(Delivery)
class DeliveryAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "endpoint",
        "event_type",
        "status",
        "attempts",
        "last_status",
        "last_answer",
        "last_attempt_at",
        "due_at",
    ]
    list_filter = ["status", "endpoint"]
    list_select_related = ["endpoint", "event"]
    fields = [
        "endpoint",
        "event_type",
        "event_id",
        "status",
        "attempts",
        "created_at",
        "retries_since",
        "due_at",
        "last_attempt_at",
        "last_status",
        "last_answer",
        "delivered_at",
    ]
    readonly_fields = fields
    actions = ["redeliver"]

    @admin.display(description="event")
    def event_type(self, obj: Delivery) -> str:
        return f"{obj.event.type} #{obj.event_id}"

    def has_redeliver_permission(self, request) -> bool:
        return request.user.has_perm("events.redeliver_delivery")

    @admin.action(permissions=["redeliver"], description="Redeliver the selected deliveries now")
    def redeliver(self, request, queryset) -> None:
        ids = list(queryset.values_list("pk", flat=True))
        for delivery_id in ids:
            delivery_redeliver(delivery_id=delivery_id)
        deliveries_wake()
        shown = "1 delivery" if len(ids) == 1 else f"{len(ids)} deliveries"
        self.message_user(request, f"{shown} sent again now.", messages.SUCCESS)
