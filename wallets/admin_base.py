"""Shared pieces of the finance staff's admin pages (wallets and tournaments)."""

from __future__ import annotations

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html


class ReadOnlyAdmin(admin.ModelAdmin):
    """Ledger records: viewable by whoever may view them, never added, changed or deleted here."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class ReadOnlyInline(admin.TabularInline):
    """Rows shown on another record's page, never added, changed or deleted there."""

    extra = 0
    can_delete = False
    select_related: tuple[str, ...] = ()

    def get_queryset(self, request):
        return super().get_queryset(request).select_related(*self.select_related)

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class NoDeleteAdmin(admin.ModelAdmin):
    def has_delete_permission(self, request, obj=None) -> bool:
        return False


def link(obj, label=None):
    if obj is None:
        return "-"
    meta = obj._meta
    url = reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[obj.pk])
    return format_html('<a href="{}">{}</a>', url, label or obj)


def changelist_link(model, label: str, **params) -> str:
    meta = model._meta
    url = reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return format_html('<a href="{}?{}">{}</a>', url, query, label)
