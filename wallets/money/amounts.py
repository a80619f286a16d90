"""The decimals every money module shares, and how an amount is written on the wire: defined
once, pure (no Django), so the pure modules (`wallets/tax/formulas.py`, `tournaments/payouts.py`,
`tournaments/games/terms.py`) use them too. Reading an amount is
`wallets.money.parsing.parse_amount`."""

from decimal import Decimal

ZERO = Decimal("0.00")
PAISA = Decimal("0.01")


def amount_text(amount: Decimal) -> str:
    """`Decimal("1234.5")` -> `"1234.50"`: two decimals, no grouping, as clients and CSV files
    read amounts (the API's strings, error details, exports)."""
    return f"{amount:.2f}"
