"""What every set-based check starts its SQL with: the INSERT of the discrepancies it finds
into the report (`wallets.Discrepancy`), followed by the check's own SELECT."""

from wallets.models import Discrepancy

INSERT = (
    f"INSERT INTO {Discrepancy._meta.db_table} "
    "(report_id, kind, subject, expected, actual, currency, details) "
)
