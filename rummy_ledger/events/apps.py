from django.apps import AppConfig


class EventsConfig(AppConfig):
    name = "rummy_ledger.events"
    label = "events"
    verbose_name = "Events and webhooks"
    # Finance roles view endpoints and deliveries (wallets.roles); an operator may redeliver.
    finance_permissions = {"finance operator": ["redeliver_delivery"]}

    def ready(self) -> None:
        from rummy_ledger.events import renderers
        from rummy_ledger.events.errors import EventErrorCode
        from rummy_ledger.plugins import offer, register

        offer("event_renderers", renderers.renderer_register)
        register(error_codes=[EventErrorCode])
