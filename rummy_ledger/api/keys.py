"""API keys for machine clients: random, shown once, stored as a SHA-256 hash.

A key looks like `rl_<prefix>_<secret>`; the prefix finds the client, the hash proves the key.
Keys are high-entropy random strings, so a fast hash is enough (no password stretching needed).

Each process remembers the client of a key it has proved for `CACHE_SECONDS` (1 s), by the
key's hash: on a warm process an authenticated request costs no query for its key. Whatever
changes a client on any node (revoked, deactivated, other scopes or guards, a new key) is read
again within that second, with no message between processes to lose: the bound holds because
an entry's second starts before the read that filled it. A save through the ORM in this process
(the admin, a re-key) forgets every entry at once. An unknown or revoked key is never remembered:
it is looked up each time, as before, and cannot fill the cache.
"""

import copy
import hashlib
import hmac
import secrets
import time

from rummy_ledger.api.models import ApiClient

CACHE_SECONDS = 1.0  # how stale a client may be: the time a revoked key keeps working at most
CACHE_SIZE = 1024  # clients remembered per process; more (never seen) and all are forgotten
_proved: dict[str, tuple[float, ApiClient]] = {}  # key hash -> (valid until, the client)


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _new_key(scopes: list[str], key: str | None = None) -> tuple[str, dict]:
    """A new key (or `key`, one issued before), and the client fields that store it (never the
    key itself)."""
    unknown = set(scopes) - set(ApiClient.Scope.values)
    if unknown or not scopes:
        raise ValueError(f"scopes must be among {sorted(ApiClient.Scope.values)}, got {scopes}")
    if key is None:
        key = f"rl_{secrets.token_hex(6)}_{secrets.token_urlsafe(32)}"
    parts = key.split("_", 2)
    if len(parts) != 3 or parts[0] != "rl" or len(parts[1]) != 12 or len(parts[2]) < 32:
        raise ValueError("not a key this service issued")
    return key, {"key_prefix": parts[1], "key_hash": _hash(key), "scopes": sorted(set(scopes))}


def api_client_create(*, name: str, scopes: list[str]) -> tuple[ApiClient, str]:
    """Create a client and return it with its key (the only time the key exists in clear)."""
    key, fields = _new_key(scopes)
    return ApiClient.objects.create(name=name, **fields), key


def api_client_rekey(
    *, name: str, scopes: list[str], key: str | None = None
) -> tuple[ApiClient, str]:
    """The client of this name with a new key (or `key`, kept from an earlier start), created if
    it does not exist yet: any other key of it stops working. For a client whose key is set at
    every start (the demo's, the simulator's): one client and one live key, not a new
    never-revoked client per start."""
    key, fields = _new_key(scopes, key)
    client, _ = ApiClient.objects.update_or_create(
        name=name, defaults={**fields, "is_active": True}
    )
    return client, key


def api_client_for_key(key: str) -> ApiClient | None:
    """The active client of `key`, or None. A copy per call: no request sees another's changes
    to its instance."""
    parts = key.split("_", 2)
    if len(parts) != 3 or parts[0] != "rl":
        return None
    digest = _hash(key)
    now = time.monotonic()
    proved = _proved.get(digest)
    if proved is not None and proved[0] > now:
        return copy.copy(proved[1])
    client = ApiClient.objects.filter(key_prefix=parts[1], is_active=True).first()
    if client is None or not hmac.compare_digest(client.key_hash, digest):
        _proved.pop(digest, None)
        return None
    if len(_proved) >= CACHE_SIZE:
        _proved.clear()
    _proved[digest] = (now + CACHE_SECONDS, client)
    return copy.copy(client)


def api_clients_forget(**_signal) -> None:
    """Forget every proved key (a client was saved or deleted in this process)."""
    _proved.clear()
