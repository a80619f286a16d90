"""What an amount of money may look like. The ledger never rounds: fees and shares are rounded
in one place, `tournaments/payouts.py`, before they reach it."""

from decimal import Decimal

from django.conf import settings
from djmoney.money import Money

PAISA = Decimal("0.01")


class MoneyError(ValueError):
    pass


def money_checked(value: object) -> Money:
    """Accept a Money in a known currency with at most two decimal places; refuse anything else.

    Floats are refused outright (0.1 is not a tenth of a rupee in binary), and so is any amount
    that would need rounding: the ledger never rounds silently.
    """
    if not isinstance(value, Money):
        raise MoneyError(f"amounts must be Money, not {type(value).__name__}")
    amount = value.amount
    if not isinstance(amount, Decimal) or not amount.is_finite():
        raise MoneyError(f"amount {amount!r} is not a finite decimal")
    if str(value.currency) not in settings.CURRENCIES:
        raise MoneyError(f"unknown currency {value.currency}")
    if amount != amount.quantize(PAISA):
        raise MoneyError(f"amount {amount} has more than two decimal places")
    return Money(amount.quantize(PAISA), value.currency)


def parse_amount(text: object, currency: str) -> Money:
    """Parse an amount given as a decimal string (JSON numbers that are floats are refused)."""
    if isinstance(text, float | bool) or not isinstance(text, str | int | Decimal):
        raise MoneyError('amounts are decimal strings such as "500.00", not JSON numbers')
    try:
        amount = Decimal(str(text).strip())
    except ArithmeticError as exc:
        raise MoneyError(f"{text!r} is not a decimal amount") from exc
    return money_checked(Money(amount, currency))
