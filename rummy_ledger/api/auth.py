"""`Authorization: Api-Key <key>` authentication and per-view scopes: an expired key answers
401 `invalid_key`; a client whose keys work only from listed networks (CIDR) answers a use from
elsewhere 403 `network_refused`, and the last refused use is kept for the admin (written at most
once a minute)."""

import ipaddress

from django.db.models import Q
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions, permissions

from rummy_ledger.api.keys import USE_RESOLUTION, KeyExpired, api_client_for_key
from rummy_ledger.api.models import ApiClient


class InvalidKey(exceptions.AuthenticationFailed):
    default_detail = "This API key has expired (or was rotated out and its time is over)."


class NetworkRefused(exceptions.PermissionDenied):
    default_detail = "This API key does not work from this network."


class ApiKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Api-Key"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        keyword, _, key = header.partition(" ")
        if keyword != self.keyword or not key.strip():
            raise exceptions.AuthenticationFailed("Use 'Authorization: Api-Key <key>'.")
        try:
            client = api_client_for_key(key.strip())
        except KeyExpired:
            raise InvalidKey from None
        if client is None:
            raise exceptions.AuthenticationFailed("Unknown or revoked API key.")
        if client.allowed_networks:
            network_required(client, request.META.get("REMOTE_ADDR", ""))
        return (client, client)

    def authenticate_header(self, request) -> str:
        return self.keyword


def network_required(client: ApiClient, address: str) -> None:
    """Refuse a use from outside the client's networks, and keep it (the last, a minute apart)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        ip = None
    if ip is not None and any(ip in ipaddress.ip_network(n) for n in client.allowed_networks):
        return
    now = timezone.now()
    stale = Q(refused_at__isnull=True) | Q(refused_at__lt=now - USE_RESOLUTION)
    ApiClient.objects.filter(stale, pk=client.pk).update(
        refused_at=now, refused_address=str(ip) if ip else None
    )
    raise NetworkRefused


class HasScope(permissions.BasePermission):
    """Grants access when the client's key carries one of the view's `required_scopes`."""

    message = "This API key lacks the scope this endpoint needs."

    def has_permission(self, request, view) -> bool:
        client = request.auth
        return client is not None and any(client.has_scope(s) for s in view.required_scopes)


class ApiKeyScheme(OpenApiAuthenticationExtension):
    target_class = ApiKeyAuthentication
    name = "ApiKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "The header is `Authorization: Api-Key <key>`: the word `Api-Key`, a "
            "space, then the key (`rl_...`), not `Bearer`; in Swagger's Authorize box type "
            "`Api-Key <key>`. A key alone (or a `Bearer` one) is refused with 401. A key carries "
            "scopes: `games`, `payments`.",
        }
