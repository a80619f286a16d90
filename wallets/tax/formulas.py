"""India's taxes on a rummy wallet, as pure functions (no Django, no I/O): GST on deposits
(CGST Rule 31B; the rate in force on the deposit's IST date: `wallets.tax.gst_rates`),
TDS on net winnings (Income-tax Act s.194BA, Rule 133), financial years.

Rounds taxes only (GST, TDS): `to_paisa` rounds half up to the paisa (at 28 %, a 100 deposit
holds 21.875 GST -> 21.88). Only a tax itself is rounded; the other part is the remainder,
so the parts always add up to the whole exactly. What games pay is rounded by
`tournaments/payouts.py` (half to even, largest remainder); the ledger rounds nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import ROUND_HALF_UP, Decimal
from zoneinfo import ZoneInfo

from wallets.money.amounts import PAISA, ZERO

HUNDRED = Decimal(100)

INDIA = ZoneInfo("Asia/Kolkata")
# A financial year is named `2026-27`: ASCII digits only (`str.isdigit` and `\d` take any
# script's digits), nothing around it. The years handled are those whose label is unambiguous
# and whose dates are plain IST: 2000-01 to 2098-99 (before 1942, Asia/Kolkata was not +05:30;
# 2099-00 would end in 2100, which two digits no longer name).
FY_LABEL = re.compile(r"([0-9]{4})-([0-9]{2})")
FY_FIRST_YEARS = range(2000, 2099)


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


def gst_rate_checked(rate_percent: Decimal) -> Decimal:
    """A GST rate in percent, 0 to 100 exclusive, to the hundredth (the rates themselves are
    data: `wallets.models.GstRate`)."""
    if not ZERO <= rate_percent < HUNDRED or rate_percent != rate_percent.quantize(PAISA):
        raise TaxError(f"a GST rate is a percentage from 0 to 99.99, not {rate_percent}")
    return rate_percent


def gst_split(amount: Decimal, *, rate_percent: Decimal) -> GstSplit:
    """A GST-inclusive deposit into its two parts: 1000 at 28 % -> 218.75 GST + 781.25
    credited; at 40 % -> 285.71 GST + 714.29 credited."""
    if amount <= 0 or amount != amount.quantize(PAISA):
        raise TaxError(f"a deposit is a positive amount in paise, not {amount}")
    gst = to_paisa(amount * rate_percent / (HUNDRED + gst_rate_checked(rate_percent)))
    return GstSplit(amount=amount, gst=gst, credited=amount - gst)


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


def _month_start(year: int, month: int) -> datetime:
    """The first instant of a month counted from January of `year` (month 13 is next January)."""
    year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
    return datetime.combine(date(year, month, 1), time.min, tzinfo=INDIA)


def financial_year_starting(first_year: int) -> FinancialYear:
    label = f"{first_year}-{(first_year + 1) % 100:02d}"
    return FinancialYear(label, _month_start(first_year, 4), _month_start(first_year, 16))


def financial_year(label: str) -> FinancialYear:
    """`2026-27` -> 1 April 2026 00:00 IST to 1 April 2027 00:00 IST."""
    match = FY_LABEL.fullmatch(label or "")
    if not match or (int(match[1]) + 1) % 100 != int(match[2]):
        raise TaxError(f"a financial year is written like 2026-27, not {label!r}")
    if int(match[1]) not in FY_FIRST_YEARS:
        raise TaxError(
            f"financial years {FY_FIRST_YEARS[0]}-{(FY_FIRST_YEARS[0] + 1) % 100:02d} to "
            f"{FY_FIRST_YEARS[-1]}-{(FY_FIRST_YEARS[-1] + 1) % 100:02d} are handled, not {label!r}"
        )
    return financial_year_starting(int(match[1]))


def months_checked(first: date, last: date) -> None:
    """Refuse a span of months outside the financial years handled (`FY_FIRST_YEARS`)."""
    earliest = financial_year_starting(FY_FIRST_YEARS[0]).start.date()
    latest = financial_year_starting(FY_FIRST_YEARS[-1]).end.date()
    for month in (first, last):
        if not earliest <= month.replace(day=1) < latest:
            raise TaxError(
                f"months from {earliest:%Y-%m} to {latest - timedelta(days=1):%Y-%m} are "
                f"handled, not {month:%Y-%m}"
            )


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
    (reachable only with a threshold, or after a deposit was reversed). Net winnings whose TDS
    rounds to 0.00 (₹0.01 at 30 %) are not counted as taxed: the next withdrawal, or the year
    end, taxes them with what comes after (counted as taxed, they would never be)."""
    net = amount + withdrawn_before - (deposits + opening) - taxed_before
    due = tds_of(net, rate_percent=rate_percent, threshold=threshold)
    if due.tds == 0:
        return Tds(net, ZERO, ZERO)
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
