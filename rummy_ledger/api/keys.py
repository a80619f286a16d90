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

A key may end (`key_expires_at`), and a client rotates its key (`api_key_rotate`): the old one
keeps working until its end time beside the new one, then answers 401 `invalid_key`, as an
expired key does. Each key's last use is kept, written at most once a minute.
"""

import copy
import hashlib
import hmac
import secrets
import time
from datetime import timedelta

from django.db.models import F, Q
from django.utils import timezone

from rummy_ledger.api.models import ApiClient

CACHE_SECONDS = 1.0  # how stale a client may be: the time a revoked key keeps working at most
CACHE_SIZE = 1024  # clients remembered per process; more (never seen) and all are forgotten
USE_RESOLUTION = timedelta(minutes=1)  # a key's last use is written at most this often
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


class KeyExpired(Exception):
    """A key this service issued, past its end (expired, or the old key of a rotation)."""


def api_client_for_key(key: str) -> ApiClient | None:
    """The active client of `key`, or None; `KeyExpired` for a key past its end. A copy per
    call: no request sees another's changes to its instance. Either of a rotating client's two
    keys proves it; its last use is written at most once a minute (`_use_record`)."""
    parts = key.split("_", 2)
    if len(parts) != 3 or parts[0] != "rl":
        return None
    digest = _hash(key)
    now = time.monotonic()
    proved = _proved.get(digest)
    if proved is None or proved[0] <= now:
        client = _client_of(parts[1], digest)
        if client is None:
            _proved.pop(digest, None)
            return None
        if len(_proved) >= CACHE_SIZE:
            _proved.clear()
        proved = _proved[digest] = (now + CACHE_SECONDS, client)
    client = proved[1]
    current = client.key_prefix == parts[1]
    ends = client.key_expires_at if current else client.previous_key_ends_at
    wall = timezone.now()
    if ends is not None and ends <= wall:
        raise KeyExpired
    _use_record(client, "key_used_at" if current else "previous_key_used_at", wall)
    return copy.copy(client)


def _client_of(prefix: str, digest: str) -> ApiClient | None:
    """The active client one of whose two keys has this prefix and hash (one query)."""
    client = (
        ApiClient.objects.filter(Q(key_prefix=prefix) | Q(previous_key_prefix=prefix))
        .filter(is_active=True)
        .first()
    )
    if client is None:
        return None
    stored = client.key_hash if client.key_prefix == prefix else client.previous_key_hash
    return client if hmac.compare_digest(stored, digest) else None


def _use_record(client: ApiClient, field: str, wall) -> None:
    """The key's last use, written when the one known here is a minute old or more (at most one
    UPDATE a minute a process, none on the other requests; the WHERE keeps processes from
    writing it back in time)."""
    used = getattr(client, field)
    if used is not None and wall - used < USE_RESOLUTION:
        return
    setattr(client, field, wall)
    stale = Q(**{f"{field}__isnull": True}) | Q(**{f"{field}__lt": wall - USE_RESOLUTION})
    ApiClient.objects.filter(stale, pk=client.pk).update(**{field: wall})


def api_key_rotate(client: ApiClient, *, overlap: timedelta) -> str:
    """A new key for the client (returned: the only time it exists in clear); its key until now
    keeps working for `overlap` (then 401 invalid_key), so the client can deploy the new one.
    A key rotated out before is forgotten."""
    key, fields = _new_key(client.scopes)
    ApiClient.objects.filter(pk=client.pk).update(
        previous_key_prefix=F("key_prefix"),
        previous_key_hash=F("key_hash"),
        previous_key_used_at=F("key_used_at"),
        previous_key_ends_at=timezone.now() + overlap,
        key_expires_at=None,
        key_used_at=None,
        **{k: v for k, v in fields.items() if k != "scopes"},
    )
    api_clients_forget()
    return key


def api_clients_forget(**_signal) -> None:
    """Forget every proved key (a client was saved or deleted in this process)."""
    _proved.clear()
