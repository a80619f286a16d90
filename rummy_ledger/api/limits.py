"""Rate limits per client: a token bucket in Redis, one round trip per lease of tokens.

Each client has one bucket, shared by every web process on every node (never one process's
memory): it holds up to `limit * API_RATE_BURST_SECONDS` tokens and refills at `limit` a second,
where `limit` is the client's own `rate_limit` (set in admin) or `API_RATE_LIMIT`. A request takes
a token; with none left it is refused with 429 `rate_limited` and `Retry-After` (whole seconds
until a token is back, at least 1), before its view runs: nothing is written. Every request of an
authenticated client counts once, a batch of deals too; a request without a client (no key, a
wrong key) is refused by authentication before it gets here.

The bucket is one Lua script run with EVALSHA (redis-py's `Script`): it reads the bucket, refills
it by Redis's own clock (`TIME`: every node counts on one clock), takes a token and writes it back,
atomically, in one round trip (Redis 5 or later: a script that writes after `TIME` needs the
effects replication that is the default since 5.0; the embedded one is 6.2). Why not a library:
DRF's `SimpleRateThrottle` keeps a list of timestamps in the cache with a get and a set (two round
trips, and two processes reading the same list both let a request through); django-ratelimit counts
fixed windows with the cache's add and incr (up to twice the limit across a window's edge);
`limits` (Flask-Limiter's) has no token bucket, and its moving window stores every request and
needs a second call for the reset time. The script is DRF's throttle hook
(`DEFAULT_THROTTLE_CLASSES`), which runs after authentication and the scope.

**Leases.** A process takes a client's tokens in leases: up to `limit * API_RATE_LEASE_SECONDS`
of them (at least one) in the one round trip, spent from its memory for at most that long, what is
left then dropped. Every token still comes out of the one bucket, so the clients' processes
together never pass the limit; a lease only lets one process hold a few tokens another might
have used, a client refused at most that many tokens early. A round trip a request cost a quarter
of the hot paths' throughput on 2 cores (bench/hot_path.py, docs/benchmarks.md); at the default
limit a lease is 250 requests. A client limited to under 1 / API_RATE_LEASE_SECONDS a second
leases one token at a time: a round trip a request, exactly as before.

A client's bucket is named by its key's prefix (`ApiClient.key_prefix`: random, unique), so
two databases sharing one Redis (a staging and a production service, parallel test runs) never
share a bucket; a new key starts with a full one.

**Redis down: fail open.** A Redis that refuses, errs or does not answer within
`RATE_LIMIT_REDIS_TIMEOUT_SECONDS` lets the request through unlimited, and this process asks it
no more for `RATE_LIMIT_REDIS_RETRY_SECONDS` (so a hung Redis delays one request per process that
often, not every request). The limits protect capacity; the money is guarded by the database
(locks, constraints, idempotency), which a request passing unlimited cannot get round. Failing
closed would turn a Redis outage into an outage of the whole API: deposits, withdrawals' results
and deals refused while the ledger is healthy (the broker down is "degraded", still ready, for
the same reason: `rummy_ledger/health.py`). The outage is logged once when it begins (WARNING)
and once when it ends.
"""

from __future__ import annotations

import logging
import time

import redis
from django.conf import settings
from redis.backoff import NoBackoff
from redis.commands.core import Script
from redis.retry import Retry
from rest_framework import exceptions, throttling

from rummy_ledger.api.models import ApiClient

logger = logging.getLogger(__name__)

KEY_PREFIX = "rummy-ledger:rate:"
MICROSECONDS = 1_000_000
# KEYS[1]: the bucket, a hash of its tokens and when they were counted (microseconds of Redis's
# clock). ARGV: the limit (tokens a second), the burst (the most it holds) and the lease (the most
# to take). Takes what it holds of the lease and returns {taken, 0}, or takes none and returns
# {0, the microseconds until one is back}. A missing bucket is full; it expires once it would be
# full again.
TOKEN_BUCKET = """
local rate, burst, lease = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local bucket = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = burst
if bucket[1] then
  local elapsed = math.max(0, now - tonumber(bucket[2]))
  tokens = math.min(burst, tonumber(bucket[1]) + elapsed * rate / 1000000)
end
if tokens < 1 then
  return {0, math.ceil((1 - tokens) * 1000000 / rate)}
end
local taken = math.min(lease, math.floor(tokens))
redis.call('HSET', KEYS[1], 'tokens', tokens - taken, 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return {taken, 0}
"""

_scripts: dict[str, Script] = {}  # by URL: the script on a client of that Redis
_down_until: dict[str, float] = {}  # by URL: asked again after this (time.monotonic())
_leases: dict[str, tuple[int, float]] = {}  # by bucket: tokens this process holds, and until when


class RateLimited(exceptions.Throttled):
    """429 `rate_limited`; DRF's handler adds `Retry-After` (the wait in whole seconds, rounded
    up)."""

    def __init__(self, wait: float, limit: int, burst: int):
        super().__init__(
            wait,
            f"Over this client's rate limit of {limit} requests a second (bursts of {burst}).",
        )
        self.details = {"limit": limit, "burst": burst, "retry_after": self.wait}


def client_limit(client: ApiClient) -> tuple[int, int]:
    """A client's limit (requests a second) and burst (the most its bucket holds)."""
    limit = client.rate_limit or settings.API_RATE_LIMIT
    return limit, limit * settings.API_RATE_BURST_SECONDS


def bucket_take(client: ApiClient) -> float:
    """Take a token from the client's bucket (this process's lease first): 0 when taken, else the
    seconds until one is back. 0 too when Redis cannot be asked (fail open)."""
    bucket = KEY_PREFIX + client.key_prefix
    held, until = _leases.get(bucket, (0, 0.0))
    if held > 0 and time.monotonic() < until:
        _leases[bucket] = (held - 1, until)
        return 0.0
    url = settings.RATE_LIMIT_REDIS_URL
    if time.monotonic() < _down_until.get(url, 0.0):
        return 0.0
    limit, burst = client_limit(client)
    lease = max(1, int(limit * settings.API_RATE_LEASE_SECONDS))
    try:
        taken, wait = _script(url)(keys=[bucket], args=[limit, burst, lease])
    except redis.RedisError as exc:
        if url not in _down_until:
            logger.warning("rate limits off: their Redis does not answer (%s)", exc)
        _down_until[url] = time.monotonic() + settings.RATE_LIMIT_REDIS_RETRY_SECONDS
        return 0.0
    if _down_until.pop(url, None) is not None:
        logger.info("rate limits on again: their Redis answers")
    if not taken:
        return wait / MICROSECONDS
    _leases[bucket] = (taken - 1, time.monotonic() + settings.API_RATE_LEASE_SECONDS)
    return 0.0


def _script(url: str) -> Script:
    if url not in _scripts:
        timeout = settings.RATE_LIMIT_REDIS_TIMEOUT_SECONDS
        connection = redis.Redis.from_url(
            url.replace("redis+socket://", "unix://", 1),  # kombu's name for a socket
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            retry=Retry(NoBackoff(), 0),  # one try: redis-py's default retries 3 times
        )
        _scripts[url] = connection.register_script(TOKEN_BUCKET)
    return _scripts[url]


class ClientRateLimit(throttling.BaseThrottle):
    """DRF's throttle hook: a request of a client whose bucket is empty is refused."""

    def allow_request(self, request, view) -> bool:
        client = request.auth
        if not isinstance(client, ApiClient):
            return True  # no client: only the schema and docs pages, which take no key
        wait = bucket_take(client)
        if wait > 0:
            raise RateLimited(wait, *client_limit(client))
        return True
