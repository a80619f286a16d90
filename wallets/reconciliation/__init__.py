"""Nightly reconciliation: set-based SQL checks that prove the books, stored as a report.

`reconcile_run()` is the one entry point (Celery beat, `manage.py reconcile`, the admin button).
"""

from wallets.reconciliation.runner import CHECKS, reconcile_run

__all__ = ["CHECKS", "reconcile_run"]
