"""India's taxes on a rummy wallet, in one family: `formulas` (pure, no Django: the GST split,
TDS on net winnings, financial years, how a tax is rounded), `gst_history` (the GST rates in
force so far, with their sources), `gst_rates` (the rate in force on a date, a future rate
proposed through maker-checker) and `tds` (a player's position in a financial year, the year
end). Their tables are the ledger's models (`wallets/models/gst.py`, `wallets/models/payments.py`)
and finance's pages its admin (`wallets/admin/gst.py`, `wallets/admin/tax_reports.py`)."""
