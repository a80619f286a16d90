from django.apps import AppConfig


class StaffConfig(AppConfig):
    name = "rummy_ledger.staff"
    label = "staff"
    verbose_name = "Staff access"
    default_auto_field = "django.db.models.BigAutoField"
    # every finance role reads the audit list (wallets/roles.py); nobody writes it but the code
    finance_permissions: dict[str, list[str]] = {}

    def ready(self):
        from rummy_ledger.staff import signals

        signals.connect()
