"""Where a webhook may be sent. A URL is `https` to a public address; `http`, and private,
loopback or otherwise non-public addresses, only for the hosts listed in WEBHOOK_ALLOWED_HOSTS.
The host is resolved when the URL is registered and again at every delivery, and the delivery
connects to the address that passed (no second look-up a DNS answer could change in between)."""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

from rummy_ledger.events.errors import WebhookUrlInvalid

DEFAULT_PORTS = {"http": 80, "https": 443}
VISIBLE_ASCII = re.compile(r"[!-~]+")


@dataclass(frozen=True)
class Target:
    """A URL that passed the rules: where to connect (`address`), and what to ask for."""

    scheme: str
    host: str
    port: int
    path: str
    address: str


def target_checked(url: str) -> Target:
    """The URL's target, resolved and checked now; WebhookUrlInvalid (422) if a rule refuses."""
    if not VISIBLE_ASCII.fullmatch(url):  # nothing a request line could not carry
        raise _refused(url, "a URL of visible ASCII (percent-encode the rest)")
    parts = urlsplit(url)
    host = parts.hostname
    if parts.scheme not in DEFAULT_PORTS or not host or parts.username or parts.password:
        raise _refused(url, "an http or https URL with a host and no credentials")
    try:
        port = parts.port or DEFAULT_PORTS[parts.scheme]
    except ValueError:
        raise _refused(url, "the port is not a port number") from None
    allowed = host in settings.WEBHOOK_ALLOWED_HOSTS
    if parts.scheme != "https" and not allowed:
        raise _refused(url, "https only (http for the hosts of WEBHOOK_ALLOWED_HOSTS)")
    addresses = _resolved(url, host, port)
    public = [a for a in addresses if ipaddress.ip_address(a).is_global]
    if not allowed and len(public) < len(addresses):
        raise _refused(url, f"{host} resolves to a non-public address")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(parts.scheme, host, port, path, addresses[0])


def _resolved(url: str, host: str, port: int) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise _refused(url, f"{host} does not resolve") from None
    return list(dict.fromkeys(info[4][0] for info in infos))


def _refused(url: str, rule: str) -> WebhookUrlInvalid:
    return WebhookUrlInvalid(f"webhook URL refused: {rule}", details={"url": url[:200]})
