"""Finance staff's admin for the ledger, by area: `ledger` (players, accounts, transfers,
entries: read-only), `proposals` (adjustments and reversals, and the `ProposalAdmin` every
maker-checker page uses), `payments` (the withdrawal queue and its reviews, KYC, TDS year ends,
the tax reports), `protection` (bonus grants and lots, deposit limits and self-exclusion:
read-only but the grants), `reconciliation` (reports, gateway statements), `flows` (the
one-way-flow report), `gst` (GST rates by date and the proposals adding one), `wind_down`
(closing the real-money book), `clients` (API keys: superusers only). `base` holds the shared
pieces (money columns, search, page-wide loading, the 403 page), `paging` the paginator of big
tables."""

from wallets.admin import (
    clients,
    flows,
    gst,
    ledger,
    payments,
    proposals,
    protection,
    reconciliation,
    wind_down,
)

__all__ = [
    "clients",
    "flows",
    "gst",
    "ledger",
    "payments",
    "proposals",
    "protection",
    "reconciliation",
    "wind_down",
]
