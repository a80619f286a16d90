from django.apps import AppConfig


class RummyLedgerConfig(AppConfig):
    name = "rummy_ledger"
    verbose_name = "rummy-ledger"

    def ready(self) -> None:
        # Shared tasks bind to this app in every Django process (web, management commands).
        from rummy_ledger.celery import app  # noqa: F401
        from rummy_ledger.metrics import broker, reading_register
        from rummy_ledger.plugins import offer, register

        offer("readings", lambda named: reading_register(*named))
        register(readings=[("celery", broker.broker_reading)])
