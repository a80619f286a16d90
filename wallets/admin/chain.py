"""The ledger chain's daily digests, read-only: what finance publishes (the chain's head at the
end of each day), so the past can be checked later against a copy kept outside the database
(`manage.py verify_ledger` recomputes the chain and compares it with these)."""

from __future__ import annotations

from django.contrib import admin
from django.utils.html import format_html

from wallets.admin.base import ReadOnlyAdmin
from wallets.models import ChainDigest


@admin.register(ChainDigest)
class ChainDigestAdmin(ReadOnlyAdmin):
    list_display = ["day", "head_hash", "through_seq", "links", "recorded_at"]
    date_hierarchy = "day"
    fields = ["day", "head", "through_seq", "links", "recorded_at"]
    readonly_fields = fields

    @admin.display(description="head (SHA-256 of the day's last link)", ordering="head")
    def head_hash(self, obj: ChainDigest):
        return format_html("<code>{}</code>", obj.head)
