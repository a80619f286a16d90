"""How money and time read for finance staff, in one place: `₹1,23,456.78`, `-₹1,234.50`,
`1,234 chips`, `2026-11-23 14:05:09 IST`, and `-` for nothing.

Pure functions (no database, no request), so every page, report and CSV header can say an amount
the same way. CSV values stay plain decimals: these are for people, not for parsers.

Decisions:
- Indian digit grouping (lakh, crore): the last three digits, then pairs: `1,23,45,678.90`.
- Rupees always show paise (`₹500.00`): a finance user compares columns to the paisa.
- Chips are counted, not priced: whole chips show no decimals (`1,234 chips`); a fractional
  amount keeps its two places (`12.50 chips`) rather than being rounded away. One chip is
  `1 chip`.
- Floats are refused, as everywhere in the project: `0.1` is not a tenth of a rupee.
- Display never rounds: an amount with more than two decimal places (which the ledger refuses,
  but a computed figure might have) shows every place it has.
- Times are shown in IST (Asia/Kolkata) to the second, whatever the server's time zone; a naive
  datetime is a bug upstream and is refused rather than guessed at.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

from djmoney.money import Money

from wallets.models.double_entry import CASH, CHIPS
from wallets.money.amounts import PAISA

NOTHING = "-"
IST = ZoneInfo("Asia/Kolkata")
RUPEE = "₹"


def group_indian(digits: str) -> str:
    """`12345678` -> `1,23,45,678`: the last three digits, then groups of two."""
    if len(digits) <= 3:
        return digits
    head, tail = digits[:-3], digits[-3:]
    pairs = []
    while len(head) > 2:
        head, pair = head[:-2], head[-2:]
        pairs.insert(0, pair)
    return ",".join([head, *pairs, tail])


def _number(amount: Decimal, *, places: bool) -> str:
    """The absolute value, grouped; with at least two decimal places when `places` is true."""
    amount = abs(amount)
    if places and amount == amount.quantize(PAISA):
        amount = amount.quantize(PAISA)
    text = format(amount, "f")
    whole, _, fraction = text.partition(".")
    return group_indian(whole) + (f".{fraction}" if fraction else "")


def money(value: Money | Decimal | int | None, currency: str | None = None) -> str:
    """An amount as a finance user reads it. A Money carries its currency; a bare number takes
    `currency` (rupees when none is given)."""
    if value is None:
        return NOTHING
    if isinstance(value, float):
        raise TypeError(f"{value!r} is a float: money is Decimal or Money")
    if isinstance(value, Money):
        amount, code = value.amount, str(value.currency)
    else:
        amount, code = Decimal(value), currency or CASH
    sign = "-" if amount < 0 else ""
    if code == CASH:
        return f"{sign}{RUPEE}{_number(amount, places=True)}"
    if code == CHIPS:
        whole = amount == amount.to_integral_value()
        shown = _number(amount.to_integral_value() if whole else amount, places=not whole)
        return f"{sign}{shown} {'chip' if abs(amount) == 1 else 'chips'}"
    return f"{sign}{_number(amount, places=True)} {code}"


def ist(value: datetime | date | None) -> str:
    """A moment in IST to the second (`2026-11-23 14:05:09 IST`); a date as `2026-11-23`."""
    if value is None:
        return NOTHING
    if not isinstance(value, datetime):
        return value.isoformat()
    if value.tzinfo is None:
        raise ValueError(f"naive datetime {value!r}: its time zone is unknown")
    return value.astimezone(IST).strftime("%Y-%m-%d %H:%M:%S IST")


def count(value: int | None) -> str:
    """A count, grouped like amounts: `12,34,567`."""
    if value is None:
        return NOTHING
    return ("-" if value < 0 else "") + group_indian(str(abs(int(value))))


def unit(currency: str) -> str:
    """What a column of amounts in this currency is in, for its header: `₹`, `chips`."""
    return {CASH: RUPEE, CHIPS: "chips"}.get(currency, currency)
