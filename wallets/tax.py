"""India's taxes on a rummy wallet, as pure functions (no Django, no I/O): GST on deposits
(CGST Rule 31B), TDS on net winnings (Income-tax Act s.194BA, Rule 133), financial years.

Rounds taxes only (GST, TDS): `to_paisa` rounds half up to the paisa (RULES.md's examples need
it: 100 -> 21.875 GST -> 21.88). Only a tax itself is rounded; the other part is the remainder,
so the parts always add up to the whole exactly. What games pay is rounded by
`tournaments/payouts.py` (half to even, largest remainder); the ledger rounds nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time
from decimal import ROUND_HALF_UP, Decimal
from zoneinfo import ZoneInfo

from wallets.amounts import PAISA, ZERO

HUNDRED = Decimal(100)

# GST is 28 % of the face value of a deposit, and the deposit includes it: 28/128 of the amount.
GST_PERCENT = Decimal(28)
GST_SHARE = GST_PERCENT / (HUNDRED + GST_PERCENT)  # 0.21875 exactly

INDIA = ZoneInfo("Asia/Kolkata")
FY_LABEL = re.compile(r"^(\d{4})-(\d{2})$")


class TaxError(ValueError):
    pass


def to_paisa(value: Decimal) -> Decimal:
    """THE rounding rule for tax: half up, to the paisa (amounts here are never negative)."""
    return value.quantize(PAISA, rounding=ROUND_HALF_UP)


# --- GST on deposits ----------------------------------------------------------------------------


@dataclass(frozen=True)
class GstSplit:
    amount: Decimal  # what the player paid
    gst: Decimal  # to GST payable
    credited: Decimal  # to the deposit bucket: amount - gst, exactly


def gst_split(amount: Decimal) -> GstSplit:
    """A GST-inclusive deposit into its two parts: 1000 -> 218.75 GST + 781.25 credited."""
    if amount <= 0 or amount != amount.quantize(PAISA):
        raise TaxError(f"a deposit is a positive amount in paise, not {amount}")
    gst = to_paisa(amount * GST_SHARE)
    return GstSplit(amount=amount, gst=gst, credited=amount - gst)


def deposit_for_credit(credited: Decimal) -> Decimal:
    """The smallest deposit that credits exactly `credited` (every amount in paise is reached:
    one paisa more deposited adds at most one paisa of GST)."""
    if credited <= 0 or credited != credited.quantize(PAISA):
        raise TaxError(f"a credit is a positive amount in paise, not {credited}")
    amount = max((credited / (1 - GST_SHARE)).quantize(PAISA) - 2 * PAISA, credited)
    while gst_split(amount).credited < credited:
        amount += PAISA
    return amount


# --- financial years ----------------------------------------------------------------------------


@dataclass(frozen=True)
class FinancialYear:
    """1 April to 31 March in India's time zone: [start, end)."""

    label: str  # "2026-27"
    start: datetime
    end: datetime

    @property
    def first_year(self) -> int:
        return self.start.year

    def previous(self) -> FinancialYear:
        return financial_year_starting(self.first_year - 1)

    def quarter(self, number: int) -> tuple[datetime, datetime]:
        """Quarter 1 (April-June) to 4 (January-March): [start, end)."""
        if number not in (1, 2, 3, 4):
            raise TaxError(f"a financial year has quarters 1 to 4, not {number}")
        return _month_start(self.first_year, 4 + 3 * (number - 1)), _month_start(
            self.first_year, 4 + 3 * number
        )

    def contains(self, moment: datetime) -> bool:
        return self.start <= moment < self.end


def _month_start(year: int, month: int) -> datetime:
    """The first instant of a month counted from January of `year` (month 13 is next January)."""
    year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
    return datetime.combine(date(year, month, 1), time.min, tzinfo=INDIA)


def financial_year_starting(first_year: int) -> FinancialYear:
    label = f"{first_year}-{(first_year + 1) % 100:02d}"
    return FinancialYear(label, _month_start(first_year, 4), _month_start(first_year, 16))


def financial_year(label: str) -> FinancialYear:
    """`2026-27` -> 1 April 2026 00:00 IST to 1 April 2027 00:00 IST."""
    match = FY_LABEL.match(label or "")
    if not match or (int(match[1]) + 1) % 100 != int(match[2]):
        raise TaxError(f"a financial year is written like 2026-27, not {label!r}")
    return financial_year_starting(int(match[1]))


def financial_year_of(moment: datetime) -> FinancialYear:
    local = moment.astimezone(INDIA)
    return financial_year_starting(local.year if local.month >= 4 else local.year - 1)


def month_span(year: int, month: int) -> tuple[datetime, datetime]:
    """A calendar month in India's time zone: [start, end)."""
    return _month_start(year, month), _month_start(year, month + 1)


# --- TDS on net winnings (s.194BA, Rule 133) ----------------------------------------------------


@dataclass(frozen=True)
class Tds:
    net_winnings: Decimal  # this event's net winnings (may be negative)
    taxed: Decimal  # the part of them taxed now (0 when no TDS is withheld)
    tds: Decimal


def tds_of(net_winnings: Decimal, *, rate_percent: Decimal, threshold: Decimal = ZERO) -> Tds:
    """TDS on net winnings above the threshold; nothing (and nothing counted as taxed) below."""
    if net_winnings <= 0 or net_winnings <= threshold:
        return Tds(net_winnings, ZERO, ZERO)
    return Tds(net_winnings, net_winnings, to_paisa(net_winnings * rate_percent / HUNDRED))


def tds_at_withdrawal(
    *,
    amount: Decimal,
    withdrawn_before: Decimal,
    deposits: Decimal,
    opening: Decimal,
    taxed_before: Decimal,
    rate_percent: Decimal,
    threshold: Decimal = ZERO,
) -> Tds:
    """Net winnings = (this + earlier withdrawals of the FY) - (deposits of the FY + opening
    balance) - net winnings already taxed in the FY; TDS on them, never more than the amount
    (reachable only with a threshold, or after a deposit was reversed)."""
    net = amount + withdrawn_before - (deposits + opening) - taxed_before
    due = tds_of(net, rate_percent=rate_percent, threshold=threshold)
    return Tds(due.net_winnings, due.taxed, min(due.tds, amount))


def tds_at_year_end(
    *,
    withdrawals: Decimal,
    closing: Decimal,
    deposits: Decimal,
    opening: Decimal,
    taxed_before: Decimal,
    rate_percent: Decimal,
) -> Tds:
    """Net winnings = (withdrawals + closing balance) - (deposits + opening balance) - already
    taxed; the threshold does not apply (Rule 133: what escaped TDS at withdrawals is taxed
    now)."""
    net = withdrawals + closing - (deposits + opening) - taxed_before
    return tds_of(net, rate_percent=rate_percent)
