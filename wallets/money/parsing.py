"""What an amount of money may look like, read from clients (`parse_amount`; written back with
`wallets.money.amounts.amount_text`). The ledger never rounds: what games pay is rounded by
`tournaments/payouts.py`, taxes by `wallets/tax/formulas.py`, before they reach it."""

import re
from decimal import Decimal

from django.conf import settings
from djmoney.money import Money

from wallets.money.amounts import PAISA


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


# An amount as clients write it: 1 to 12 ASCII digits, optionally a point and one or two decimals.
AMOUNT_PATTERN = r"[0-9]{1,12}(?:\.[0-9]{1,2})?"
_AMOUNT = re.compile(AMOUNT_PATTERN)
_NEGATIVE = re.compile(r"-[0-9]*\.?[0-9]*")
_TOO_PRECISE = re.compile(r"[0-9]+\.[0-9]{3,}")


def _kind(value: object) -> str:
    """What a decoded JSON value that is not a string was sent as."""
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "JSON numbers"
    return {list: "arrays", dict: "objects"}.get(type(value), "null")


def parse_amount(text: object, currency: str) -> Money:
    """Parse an amount written as a decimal string, and nothing else.

    Exactly `AMOUNT_PATTERN`, as a string: no JSON numbers (not even integers: a float would
    have lost its paise before it got here, and an integer invites one), no sign, exponent,
    spaces, underscores or non-ASCII digits (`Decimal()` takes all of those: "1e3", "1_000",
    " 100 ", Arabic-Indic "100"), no more than 12 digits before the point.
    """
    if not isinstance(text, str):
        raise MoneyError(f'amounts are decimal strings such as "500.00", not {_kind(text)}')
    if _AMOUNT.fullmatch(text) is None:
        if _NEGATIVE.fullmatch(text):
            raise MoneyError("the amount must be greater than zero")
        if _TOO_PRECISE.fullmatch(text):
            raise MoneyError(f"amount {text} has more than two decimal places")
        raise MoneyError(
            f"{text!r} is not a decimal amount: 1 to 12 digits 0-9, optionally a point and one or "
            'two decimals, such as "500" or "500.00"'
        )
    return money_checked(Money(Decimal(text), currency))


def amount_pattern(maximum: Decimal | None = None, minimum: Decimal | None = None) -> str:
    """`AMOUNT_PATTERN` narrowed to what the API takes: above zero and, when given, at least
    `minimum` and at most `maximum`; as a regular expression for OpenAPI (ECMA 262 and Python
    alike), so that a schema-valid amount is accepted and every other one refused
    (tests/wallets/test_amount_pattern.py). Each bound is a lookahead on the value."""
    bounds = [
        r"(?!.*\n)",  # a validator in Python lets `$` match before a final newline
        f"(?={AMOUNT_PATTERN}$)",
        r"(?!0*(?:\.0{1,2})?$)",  # above zero
    ]
    if maximum is not None:
        bounds.append(f"(?=0*(?:{_at_most(maximum)})$)")
    if minimum is not None:
        bounds.append(f"(?=0*(?:{_at_least(minimum)})$)")
    return f"^{''.join(bounds)}.*$"


_CENTS = (*"0123456789", *(f"{n:02}" for n in range(100)))  # what may follow the point
_ANY_CENTS = r"(?:\.[0-9]{1,2})?"


def _cents(keep) -> str:
    """The optional decimals whose value (in cents) `keep` takes."""
    kept = [c for c in _CENTS if keep(c.ljust(2, "0"))]
    absent = "?" if keep("00") else ""
    return f"(?:\\.(?:{'|'.join(kept)})){absent}" if kept else ""


def _at_most(maximum: Decimal) -> str:
    whole, cents = f"{maximum:.2f}".split(".")
    below = [f"[0-9]{{1,{len(whole) - 1}}}"] if len(whole) > 1 else []
    for i, digit in enumerate(whole):  # a smaller digit where they first differ
        if digit != "0":
            rest = len(whole) - i - 1
            below.append(whole[:i] + f"[0-{int(digit) - 1}]" + f"[0-9]{{{rest}}}" * bool(rest))
    return f"(?:{'|'.join(below)}){_ANY_CENTS}|{whole}{_cents(lambda c: c <= cents)}"


def _at_least(minimum: Decimal) -> str:
    whole, cents = f"{minimum:.2f}".split(".")
    above = [f"[1-9][0-9]{{{len(whole)},}}"]  # more digits
    for i, digit in enumerate(whole):  # a greater digit where they first differ
        if digit != "9":
            rest = len(whole) - i - 1
            above.append(whole[:i] + f"[{int(digit) + 1}-9]" + f"[0-9]{{{rest}}}" * bool(rest))
    return f"(?:{'|'.join(above)}){_ANY_CENTS}|{whole}{_cents(lambda c: c >= cents)}"
