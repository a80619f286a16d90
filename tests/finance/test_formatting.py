"""Money and time as finance staff read them (wallets.money.formatting and its template filters)."""

import re
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from django.template import Context, Template
from djmoney.money import Money
from hypothesis import given
from hypothesis import strategies as st

from wallets.money.formatting import group_indian, ist, money

# An Indian-grouped number: 1-3 digits, or 1-2 digits, then pairs, then the last three.
INDIAN = r"(\d{1,3}|\d{1,2}(,\d{2})*,\d{3})"
RUPEES = re.compile(rf"^(-?)₹({INDIAN}\.\d{{2}})$")


def parse_rupees(text: str) -> Decimal:
    match = RUPEES.match(text)
    assert match, f"{text!r} is not -₹1,23,456.78 shaped"
    return Decimal(match.group(1) + match.group(2).replace(",", ""))


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (Money("123456.78", "INR"), "₹1,23,456.78"),
        (Money("12345678.90", "INR"), "₹1,23,45,678.90"),
        (Money("1234567890.12", "INR"), "₹1,23,45,67,890.12"),
        (Money("-1234.5", "INR"), "-₹1,234.50"),
        (Money("437.5", "INR"), "₹437.50"),
        (Money("0", "INR"), "₹0.00"),
        (Money("-0.00", "INR"), "₹0.00"),
        (Money("999", "INR"), "₹999.00"),
        (Money("1000", "INR"), "₹1,000.00"),
        (Money("100000", "INR"), "₹1,00,000.00"),
        (Decimal("2230625.00"), "₹22,30,625.00"),
        (Money("1234", "CHP"), "1,234 chips"),
        (Money("1234.00", "CHP"), "1,234 chips"),
        (Money("12.50", "CHP"), "12.50 chips"),
        (Money("-160", "CHP"), "-160 chips"),
        (Money("1", "CHP"), "1 chip"),
        (Money("123456", "CHP"), "1,23,456 chips"),
        (None, "-"),
    ],
)
def test_money_reads_like_a_finance_tool(value, shown):
    assert money(value) == shown


def test_a_bare_amount_takes_the_currency_it_is_given():
    assert money(Decimal("374.15"), "INR") == "₹374.15"
    assert money(Decimal("640"), "CHP") == "640 chips"
    assert money(7) == "₹7.00"


def test_display_never_rounds_and_refuses_floats():
    assert money(Decimal("1234.005")) == "₹1,234.005"
    with pytest.raises(TypeError):
        money(0.1)


@given(st.decimals(min_value=-(10**15), max_value=10**15, places=2, allow_nan=False))
def test_grouping_parses_back_to_the_same_amount(amount):
    assert parse_rupees(money(amount, "INR")) == amount


@given(st.integers(min_value=0, max_value=10**20))
def test_grouping_keeps_every_digit_in_lakh_crore_groups(number):
    grouped = group_indian(str(number))
    assert grouped.replace(",", "") == str(number)
    assert re.fullmatch(INDIAN, grouped)


@given(st.integers(min_value=-(10**12), max_value=10**12))
def test_whole_chips_parse_back(count):
    shown = money(Money(count, "CHP"))
    number = shown.removesuffix(" chips").removesuffix(" chip")
    assert Decimal(number.replace(",", "")) == count


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (datetime(2026, 11, 23, 8, 35, 9, 123456, tzinfo=UTC), "2026-11-23 14:05:09 IST"),
        (datetime(2026, 11, 23, 20, 0, 0, tzinfo=UTC), "2026-11-24 01:30:00 IST"),
        (
            datetime(2026, 11, 23, 9, 0, 0, tzinfo=timezone(timedelta(hours=-5))),
            "2026-11-23 19:30:00 IST",
        ),
        (date(2026, 11, 23), "2026-11-23"),
        (None, "-"),
    ],
)
def test_times_in_ist_to_the_second(value, shown):
    assert ist(value) == shown


def test_a_naive_time_is_refused_not_guessed():
    with pytest.raises(ValueError, match="naive"):
        ist(datetime(2026, 11, 23, 14, 5, 9))


def test_template_filters():
    rendered = Template(
        "{% load finance %}{{ a|money }} | {{ fee|money:'INR' }} | {{ c|money }} | "
        "{{ none|money }} | {{ t|ist }}"
    ).render(
        Context(
            {
                "a": Money("-1234.5", "INR"),
                "fee": Decimal("374.15"),
                "c": Money("1234", "CHP"),
                "none": None,
                "t": datetime(2026, 11, 23, 8, 35, 9, tzinfo=UTC),
            }
        )
    )
    assert rendered == "-₹1,234.50 | ₹374.15 | 1,234 chips | - | 2026-11-23 14:05:09 IST"
