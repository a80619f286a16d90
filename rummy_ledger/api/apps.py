from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save


class ApiConfig(AppConfig):
    name = "rummy_ledger.api"
    label = "api"
    verbose_name = "API"
    # Finance roles view the API clients (wallets.roles); only superusers add or change one: a
    # key with the `payments` scope moves money with no approver.
    finance_permissions: dict[str, list[str]] = {}

    def ready(self) -> None:
        from rummy_ledger.api import keys
        from rummy_ledger.api.codes import error_codes_register
        from rummy_ledger.api.models import ApiClient
        from rummy_ledger.plugins import offer

        offer("error_codes", error_codes_register)  # the apps' codes: the catalogue names no app

        for signal in (post_save, post_delete):
            signal.connect(keys.api_clients_forget, sender=ApiClient, dispatch_uid="api-keys")
