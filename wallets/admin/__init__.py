"""Finance staff's admin for the ledger, by area: `accounts` (players, accounts, transfers,
entries: read-only), `proposals` (adjustments and reversals, and the `ProposalAdmin` every
maker-checker page uses), `payments` (the withdrawal queue and its reviews, KYC, TDS year ends,
the tax reports), `protection` (bonus grants and lots, deposit limits and self-exclusion:
read-only but the grants), `reconciliation` (reports, gateway statements), `flows` (the
one-way-flow report), `gst` (GST rates by date and the proposals adding one), `months` (month
closes), `wind_down` (closing the real-money book), `chain` (the ledger chain's daily digests, to
publish), `clients` (API keys: superusers only), `webhooks` (the clients' webhook endpoints and
deliveries; an operator redelivers). `base` holds the shared pieces (money columns, search,
page-wide loading, the 403 page), `paging` the paginator of big tables. The finance home page is
`dashboard` (built from what the apps register), the reports it lists `reports`, and what a search
term names `search`."""

from wallets.admin import (
    accounts,
    chain,
    clients,
    flows,
    gst,
    months,
    payments,
    proposals,
    protection,
    reconciliation,
    webhooks,
    wind_down,
)

__all__ = [
    "accounts",
    "chain",
    "clients",
    "flows",
    "gst",
    "months",
    "payments",
    "proposals",
    "protection",
    "reconciliation",
    "webhooks",
    "wind_down",
]
