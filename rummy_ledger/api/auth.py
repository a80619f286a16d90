"""`Authorization: Api-Key <key>` authentication and per-view scopes."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions, permissions

from rummy_ledger.api.keys import api_client_for_key


class ApiKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Api-Key"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        keyword, _, key = header.partition(" ")
        if keyword != self.keyword or not key.strip():
            raise exceptions.AuthenticationFailed("Use 'Authorization: Api-Key <key>'.")
        client = api_client_for_key(key.strip())
        if client is None:
            raise exceptions.AuthenticationFailed("Unknown or revoked API key.")
        return (client, client)

    def authenticate_header(self, request) -> str:
        return self.keyword


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
