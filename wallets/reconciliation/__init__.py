"""Nightly reconciliation: set-based SQL checks that prove the books, stored as a report.

`reconcile_run()` is the one entry point (Celery beat, `manage.py reconcile`, the admin button);
apps add their own checks with `register()`.
"""

from wallets.reconciliation.runner import CHECKS, Check, kind_description, reconcile_run, register

__all__ = ["CHECKS", "Check", "kind_description", "reconcile_run", "register"]
