"""The ledger's services: `ledger` (posting, reversing, balances, statements), `players`
(players and their accounts), `deposits` (money in), `proposals` (maker-checker adjustments and
reversals). Every movement of money goes through `ledger.transfers_post`."""
