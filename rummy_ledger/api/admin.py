"""API clients (game servers, the payment gateway): created here, the key shown once.

The key is shown on the page that answers the form, never carried to another page (Django's
messages travel in a signed but readable cookie), and admin pages are never cached. The stored hash
is a secret too: no one can filter or search the list by it (`?key_hash__startswith=` would read
it a character at a time).
"""

from datetime import timedelta

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.db.models.constants import LOOKUP_SEP
from django.template.response import TemplateResponse

from rummy_ledger.api.keys import api_client_create, api_key_rotate
from rummy_ledger.api.models import ApiClient
from rummy_ledger.staff.audit import audit_record
from rummy_ledger.staff.models import AuditKind

SECRET_FIELDS = frozenset({"key_hash", "previous_key_hash"})
# What a superuser changes on a client: revoke it, its guards (docs/trust-model.md; the ledger
# enforces them: wallets.services.client_guards, and pairs clients: wallets.admin.clients) and its
# rate limit (rummy_ledger.api.limits). Each save is in the client's admin history, with the user.
# Its key's end and the networks its keys work from too.
GUARDED = [
    "is_active",
    "paired_players_only",
    "hourly_escrow_cap",
    "rate_limit",
    "key_expires_at",
    "allowed_networks",
]
# What its keys did: each key's last use (a minute's precision), the rotation's old key and its
# end, the last use refused for its network.
KEY_USE = [
    "key_prefix",
    "key_used_at",
    "previous_key_prefix",
    "previous_key_ends_at",
    "previous_key_used_at",
    "refused_at",
    "refused_address",
]


class ApiClientCreateForm(forms.ModelForm):
    scopes = forms.MultipleChoiceField(
        choices=ApiClient.Scope.choices, widget=forms.CheckboxSelectMultiple
    )

    class Meta:
        model = ApiClient
        fields = ["name"]


@admin.register(ApiClient)
class ApiClientAdmin(admin.ModelAdmin):
    """Game servers and the payment gateway. The key is shown once, right after creation; a
    client is never deleted (what it did names it), it is revoked."""

    list_display = [
        "name",
        "key_prefix",
        "scopes",
        "is_active",
        "rate_limit",
        "key_used_at",
        "previous_key_ends_at",
        "refused_at",
        "created_at",
    ]
    actions = ["key_rotate_action"]
    list_filter = ["is_active"]
    search_fields = ["name", "key_prefix"]

    def lookup_allowed(self, lookup, value, request=None) -> bool:
        if lookup.split(LOOKUP_SEP)[0] in SECRET_FIELDS:
            return False
        return super().lookup_allowed(lookup, value, request)

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    # Superusers only, whatever a group grants: a `payments` key credits deposits with no approver,
    # so issuing one is not a finance role's decision (see "Maker-checker" in
    # docs/finance-admin.md).
    def has_add_permission(self, request) -> bool:
        return request.user.is_superuser

    def has_change_permission(self, request, obj=None) -> bool:
        return request.user.is_superuser

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = ApiClientCreateForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["name", "scopes"]
        return [*GUARDED, "name", "scopes", *KEY_USE, "created_at"]

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else ["name", "scopes", *KEY_USE, "created_at"]

    def get_actions(self, request):
        actions = super().get_actions(request)
        if not request.user.is_superuser:
            actions.pop("key_rotate_action", None)
        return actions

    @admin.action(description="Rotate key (the old one works API_KEY_ROTATION_HOURS more)")
    def key_rotate_action(self, request, queryset):
        """One client at a time: its new key is shown once, on the page this answers."""
        if queryset.count() != 1:
            self.message_user(request, "Rotate one client at a time.", messages.ERROR)
            return None
        client = queryset.get()
        overlap = timedelta(hours=settings.API_KEY_ROTATION_HOURS)
        key = api_key_rotate(client, overlap=overlap)
        client.refresh_from_db()
        audit_record(
            AuditKind.KEY_CHANGE,
            actor=request.user,
            subject=f"API client {client.name}",
            detail=f"rotated: new key {client.key_prefix}, the old {client.previous_key_prefix} "
            f"works until {client.previous_key_ends_at:%Y-%m-%d %H:%M} UTC",
            request=request,
        )
        return self.key_page(request, client, key)

    def save_model(self, request, obj, form, change):
        """Every change of a client's key or guards is in the staff audit list."""
        if change:
            obj.save(update_fields=GUARDED)
            changed = ", ".join(form.changed_data) or "nothing"
            audit_record(
                AuditKind.KEY_CHANGE,
                actor=request.user,
                subject=f"API client {obj.name}",
                detail=f"changed: {changed}",
                request=request,
            )
            return
        client, key = api_client_create(
            name=form.cleaned_data["name"], scopes=form.cleaned_data["scopes"]
        )
        audit_record(
            AuditKind.KEY_CHANGE,
            actor=request.user,
            subject=f"API client {client.name}",
            detail=f"created with key {client.key_prefix}, scopes {', '.join(client.scopes)}",
            request=request,
        )
        obj.pk = client.pk
        obj.__dict__.update({k: v for k, v in client.__dict__.items() if not k.startswith("_")})
        obj.new_key = key  # for response_add only; never stored

    def response_add(self, request, obj, post_url_continue=None):
        return self.key_page(request, obj, obj.new_key)

    def key_page(self, request, client, key):
        """The new key, on this response and nowhere else."""
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": f"The key of {client.name}",
            "client": client,
            "key": key,
        }
        # admin views are never_cache: the page is not stored by the browser either
        return TemplateResponse(request, "admin/api/apiclient/key_created.html", context)
