"""The schema's amount patterns say exactly what the API takes: a string the pattern matches is
accepted, every other one refused. Pure: the pattern against the field."""

import re
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st
from rest_framework import serializers

from wallets.api.serializers import AmountField, LimitField
from wallets.money.parsing import amount_pattern

# Strings near the edge: digits with a point, one to three decimals, leading zeros, and a few
# characters the server must refuse.
DIGITS = st.text("0123456789", min_size=0, max_size=14)
NEAR = st.builds(
    lambda whole, point, cents: whole + point + cents,
    DIGITS,
    st.sampled_from(["", ".", "\n"]),
    st.text("0123456789", max_size=3),
)
AMOUNTS = NEAR | st.sampled_from(
    ["0", "0.00", "00.0", ".5", "1.", "10000000", "10000000.00", "10000000.01", "10000000.1",
     "9999999.99", "000000000001", "0000000000001", "1e3", "-1", " 1", "1\n", "\uff11"]
)  # fmt: skip


def accepts(field: serializers.Field, text: str) -> bool:
    try:
        field.run_validation(text)
    except serializers.ValidationError:
        return False
    return True


@given(AMOUNTS)
def test_the_amount_pattern_matches_exactly_what_an_amount_field_takes(text):
    pattern = amount_pattern(Decimal("10000000.00"))  # LEDGER_MAX_TRANSFER's default
    assert (re.search(pattern, text) is not None) == accepts(AmountField(), text), text


@given(AMOUNTS, st.sampled_from(["1234.56", "1.00", "500.00", "99999999.99"]))
def test_any_maximum_is_its_own_bound(text, maximum):
    pattern = amount_pattern(Decimal(maximum))
    taken = re.fullmatch(r"[0-9]{1,12}(\.[0-9]{1,2})?", text) is not None
    expected = taken and Decimal(0) < Decimal(text) <= Decimal(maximum)
    assert (re.search(pattern, text) is not None) == expected, (text, maximum)


@given(AMOUNTS, st.sampled_from(["1.00", "0.50", "99.99", "100.00", "9.10"]))
def test_any_minimum_is_its_own_bound(text, minimum):
    pattern = amount_pattern(Decimal("10000000.00"), minimum=Decimal(minimum))
    taken = re.fullmatch(r"[0-9]{1,12}(\.[0-9]{1,2})?", text) is not None
    expected = taken and Decimal(minimum) <= Decimal(text) <= Decimal("10000000.00")
    assert (re.search(pattern, text) is not None) == expected, (text, minimum)


@given(AMOUNTS)
def test_the_limit_pattern_matches_exactly_what_a_limit_field_takes(text):
    assert (re.search(amount_pattern(), text) is not None) == accepts(LimitField(), text), text
