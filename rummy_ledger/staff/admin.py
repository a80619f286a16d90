"""The audit list (read-only: filters by person, kind and date; its CSV, of the rows the filters
show), and the users' admin with the superuser's "Reset second factor" action."""

from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.urls import path, reverse
from django_otp.plugins.otp_static.models import StaticDevice
from django_otp.plugins.otp_totp.models import TOTPDevice

from rummy_ledger.csv_cells import csv_response
from rummy_ledger.staff.models import AuditEvent
from rummy_ledger.staff.second_factor import ResetRefused, second_factor_reset

CSV_HEADER = ["time (UTC)", "kind", "person", "subject", "detail", "address"]
ACTORS_LISTED = 200


class ActorFilter(admin.SimpleListFilter):
    title = "person"
    parameter_name = "actor"

    def lookups(self, request, model_admin):
        actors = (
            AuditEvent.objects.exclude(actor="")
            .order_by("actor")
            .values_list("actor", flat=True)
            .distinct()[:ACTORS_LISTED]
        )
        return [(actor, actor) for actor in actors]

    def queryset(self, request, queryset):
        return queryset.filter(actor=self.value()) if self.value() else queryset


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ["at", "kind", "actor", "subject", "detail", "address"]
    list_filter = [ActorFilter, "kind", ("at", admin.DateFieldListFilter)]
    search_fields = ["actor", "subject", "detail"]
    date_hierarchy = "at"
    show_full_result_count = False
    list_per_page = 100
    change_list_template = "admin/staff/auditevent/change_list.html"

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def get_urls(self):
        csv = path("csv/", self.admin_site.admin_view(self.csv_view), name="staff_auditevent_csv")
        return [csv, *super().get_urls()]

    def changelist_view(self, request, extra_context=None):
        query = request.GET.urlencode()
        csv_url = reverse("admin:staff_auditevent_csv") + (f"?{query}" if query else "")
        return super().changelist_view(request, {**(extra_context or {}), "csv_url": csv_url})

    def csv_view(self, request):
        """The rows the list's filters and search show, every page of them."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        changelist = self.get_changelist_instance(request)
        rows = (
            [e.at.isoformat(), e.kind, e.actor, e.subject, e.detail, e.address or ""]
            for e in changelist.queryset.iterator()
        )
        return csv_response("staff-audit.csv", CSV_HEADER, rows)


admin.site.unregister(User)
# django-otp's own device admins show a device's secret: devices are enrolled by their owner and
# reset by a superuser from the users' list, never edited.
for device_model in (TOTPDevice, StaticDevice):
    if admin.site.is_registered(device_model):
        admin.site.unregister(device_model)


@admin.register(User)
class StaffUserAdmin(UserAdmin):
    actions = ["second_factor_reset_action"]

    @admin.action(description="Reset second factor (lost device)")
    def second_factor_reset_action(self, request, queryset):
        for user in queryset:
            try:
                second_factor_reset(user, by=request.user, request=request)
            except ResetRefused as refused:
                self.message_user(request, f"{user}: {refused}", messages.ERROR)
                continue
            self.message_user(request, f"{user} sets up a second factor at the next sign-in.")

    def get_actions(self, request):
        actions = super().get_actions(request)
        if not request.user.is_superuser:
            actions.pop("second_factor_reset_action", None)
        return actions
