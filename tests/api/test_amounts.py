"""Amounts: exactly `^\\d{1,12}(\\.\\d{1,2})?$` as a JSON string,
at most the per-transfer maximum; everything else a 400 naming the field, nothing credited."""

from decimal import Decimal

import pytest
from djmoney.money import Money
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.api.conftest import assert_envelope, ledger_state
from wallets.models import CASH, Transfer
from wallets.money.parsing import MoneyError, parse_amount

pytestmark = pytest.mark.django_db


def deposit(api, amount, reference="gw-1", player="p1"):
    body = {"amount": amount, "reference": reference}
    return api.post(f"/api/v1/players/{player}/deposits", body, format="json")


REFUSED = {
    # were a 500 (InvalidOperation)
    "1e30": "not a decimal amount",
    "1e400": "not a decimal amount",
    "1" * 40: "not a decimal amount",
    # were credited
    "1e3": "not a decimal amount",
    "1_000": "not a decimal amount",
    "\u0661\u0660\u0660": "not a decimal amount",  # Arabic-Indic 100
    "\u0967\u0966": "not a decimal amount",  # Devanagari 10
    "+10": "not a decimal amount",
    " 100 ": "not a decimal amount",
    "10\n": "not a decimal amount",
    "100.": "not a decimal amount",
    ".5": "not a decimal amount",
    "0x10": "not a decimal amount",
    "Infinity": "not a decimal amount",
    "NaN": "not a decimal amount",
    "1,000.00": "not a decimal amount",
    "": "not a decimal amount",
    "1" * 13: "not a decimal amount",  # 13 digits before the point
    "-5.00": "greater than zero",
    "0.00": "greater than zero",
    "1.001": "two decimal places",
}


@pytest.mark.parametrize("amount", REFUSED, ids=[repr(a)[:20] for a in REFUSED])
def test_only_plain_decimal_strings_are_amounts(api, amount):
    response = deposit(api, amount)
    error = assert_envelope(response, 400, "invalid")
    assert REFUSED[amount] in error["details"]["amount"][0]
    assert ledger_state() == ((0, {"n": 0, "total": None}, [], 0, 0, 0))


@pytest.mark.parametrize("number", ["100", "1" + "0" * 30, "100.0", "1e300", "-5"])
def test_json_numbers_are_refused_even_integers(api, number):
    body = f'{{"amount": {number}, "reference": "gw-1"}}'
    response = api.generic("POST", "/api/v1/players/p1/deposits", body, "application/json")
    error = assert_envelope(response, 400, "invalid")
    assert "not JSON numbers" in error["details"]["amount"][0]
    assert not Transfer.objects.exists()


@pytest.mark.parametrize(
    ("value", "named"),
    [("true", "not true or false"), ("[]", "not arrays"), ("{}", "not objects"), ("null", "null")],
)
def test_an_amount_of_another_json_type_is_refused_naming_that_type(api, value, named):
    body = f'{{"amount": {value}, "reference": "gw-1"}}'
    response = api.generic("POST", "/api/v1/players/p1/deposits", body, "application/json")
    error = assert_envelope(response, 400, "invalid")
    message = error["details"]["amount"][0]
    assert named in message and "numbers" not in message, message
    assert not Transfer.objects.exists()


@pytest.mark.parametrize("amount", ["1", "1.5", "999.99", "10000000", "10000000.00"])
def test_plain_decimal_strings_up_to_the_maximum_are_credited(api, amount):
    response = deposit(api, amount)
    assert response.status_code == 201, response.json()
    assert Decimal(response.json()["amount"]) == Decimal(amount)


@pytest.mark.parametrize("amount", ["10000000.01", "999999999999.99"])
def test_an_amount_above_the_per_transfer_maximum_is_refused(api, amount):
    response = deposit(api, amount)
    error = assert_envelope(response, 400, "invalid")
    assert "per-transfer maximum" in error["details"]["amount"][0]
    assert not Transfer.objects.exists()


def test_the_maximum_is_a_setting(api, settings):
    settings.LEDGER_MAX_TRANSFER = Decimal("50.00")
    assert deposit(api, "50.00").status_code == 201
    assert_envelope(deposit(api, "50.01", reference="gw-2"), 400, "invalid")


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.text(alphabet="0123456789.,-+eE_ \n\u0661\u0967", max_size=16) | st.text(max_size=20)
)
def test_parse_amount_accepts_exactly_the_pattern(text):
    import re

    plain = re.fullmatch(r"[0-9]{1,12}(\.[0-9]{1,2})?", text) is not None
    try:
        money = parse_amount(text, CASH)
    except MoneyError:
        assert not plain
    else:
        assert plain and money == Money(Decimal(text), CASH)
