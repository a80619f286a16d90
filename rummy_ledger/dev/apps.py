from django.apps import AppConfig


class DevConfig(AppConfig):
    """Development commands (serve, embedded, the demo's); installed only with RUMMY_EMBEDDED=1."""

    name = "rummy_ledger.dev"
    label = "rummy_ledger_dev"
    verbose_name = "rummy-ledger development tooling"
