"""`rummy_ledger.csv_cells`: a cell a spreadsheet would run as a formula is written as text; plain
numbers stay numbers; the file carries the byte order mark."""

from __future__ import annotations

import csv
import io
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rummy_ledger.csv_cells import BOM, cell, csv_write

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@pytest.mark.parametrize(
    "text", ["=1+1", "+1", "-2+3", "-1-2", "@SUM(1+1)", "\t=1", "\r=1", "-", "-1e3", "-.5", "-٣"]
)
def test_a_cell_a_spreadsheet_would_run_gets_a_leading_quote(text):
    assert cell(text) == "'" + text


@pytest.mark.parametrize("value", ["-12.50", "-1", "0", "12", Decimal("-0.01"), 7, None, "a=b"])
def test_plain_numbers_and_harmless_text_are_written_as_they_are(value):
    assert cell(value) == ("" if value is None else str(value))


@given(st.text())
def test_only_a_plain_number_may_start_like_a_formula(text):
    written = cell(text)

    assert written in (text, "'" + text)
    if written.startswith(FORMULA_START):
        number = written.removeprefix("-")
        assert number.replace(".", "", 1).isascii() and number.replace(".", "", 1).isdigit()


def test_the_file_starts_with_the_byte_order_mark_and_reads_back():
    out = io.StringIO()
    csv_write(out, ["reference", "amount (₹)"], [["=cmd", Decimal("-5.00")], ["ok", "1.00"]])

    assert out.getvalue().startswith(BOM)
    assert list(csv.reader(io.StringIO(out.getvalue().removeprefix(BOM)))) == [
        ["reference", "amount (₹)"],
        ["'=cmd", "-5.00"],
        ["ok", "1.00"],
    ]
