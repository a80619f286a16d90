from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "rummy_ledger.api"
    label = "api"
    verbose_name = "API"
