"""Finance sets a player's region on the player's page: the one way a blocked region reported by
the payment gateway is replaced by an open one (`real_money.region_set_by_finance`). The change
is in the player's protection history and the page's admin history."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponseRedirect
from django.urls import path, reverse

from rummy_ledger.errors import DomainError
from wallets.models import Player
from wallets.services import real_money
from wallets.services.regions import REGIONS

PERMISSION = "wallets.set_player_region"


class PlayerRegionAdmin:
    """A ModelAdmin mixin for players: a "Set region" form on the page, for who may."""

    change_form_template = "admin/wallets/player/change_form.html"

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = {
            **(extra_context or {}),
            "can_set_region": request.user.has_perm(PERMISSION),
            "regions": sorted(REGIONS.items(), key=lambda item: item[1]),
        }
        return super().change_view(request, object_id, form_url, extra_context)

    def get_urls(self):
        view = self.admin_site.admin_view(self.region_view)
        return [path("<int:pk>/region/", view, name="wallets_player_region"), *super().get_urls()]

    def region_view(self, request: HttpRequest, pk: int):
        if request.method != "POST" or not request.user.has_perm(PERMISSION):
            raise PermissionDenied
        if not Player.objects.filter(pk=pk).exists():
            raise Http404("no such player")
        try:
            player = real_money.region_set_by_finance(
                player_id=pk, region=request.POST.get("region", ""), set_by=request.user
            )
        except DomainError as exc:
            self.message_user(request, f"Region not set: {exc.message}", messages.ERROR)
        else:
            said = f"Region set to {player.region} ({REGIONS[player.region]})"
            self.log_change(request, player, said)
            self.message_user(request, f"{said}.", messages.SUCCESS)
        return HttpResponseRedirect(reverse("admin:wallets_player_change", args=[pk]))
