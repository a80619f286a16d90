"""Pairings of API clients: which payments clients' players a games client may seat, once its
guard is on (docs/trust-model.md; enforced by `wallets.services.client_guards`). The clients,
their keys and the guard switches themselves are the API layer's page
(`rummy_ledger.api.admin`)."""

from django import forms
from django.contrib import admin

from rummy_ledger.api.models import ApiClient
from wallets.models import ClientPairing


class ClientPairingForm(forms.ModelForm):
    class Meta:
        model = ClientPairing
        fields = ["games_client", "payments_client"]

    def clean(self):
        data = super().clean()
        games, payments = data.get("games_client"), data.get("payments_client")
        if games is not None and not games.has_scope(ApiClient.Scope.GAMES):
            self.add_error("games_client", "This client has no games scope.")
        if payments is not None and not payments.has_scope(ApiClient.Scope.PAYMENTS):
            self.add_error("payments_client", "This client has no payments scope.")
        return data


@admin.register(ClientPairing)
class ClientPairingAdmin(admin.ModelAdmin):
    """Which payments clients' players a games client may seat, once its guard is on.

    Superusers only, not maker-checker: a pairing widens whom a games key may stake, which is
    what issuing a key with a scope already does, and keys are a superuser's (see
    `ApiClientAdmin`). An operator-and-approver pair could not make a pairing safer than the
    superuser who can mint a games key outright; docs/trust-model.md says why at length.
    A pairing is never edited: a superuser deletes it and adds another (both in the history).
    """

    form = ClientPairingForm
    list_display = ["games_client", "payments_client", "created_by", "created_at"]
    list_select_related = ["games_client", "payments_client", "created_by"]
    readonly_fields = ["created_by", "created_at"]

    def has_add_permission(self, request) -> bool:
        return request.user.is_superuser

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return request.user.is_superuser

    def save_model(self, request, obj, form, change):
        obj.created_by = request.user
        super().save_model(request, obj, form, change)
