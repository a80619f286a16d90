"""The pure tax formulas (wallets.tax.formulas): GST split, TDS under Rule 133, financial years."""

from datetime import datetime
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.builders import deposit_for_credit
from wallets.tax import formulas

D = Decimal
paise = st.integers(min_value=1, max_value=10**9).map(lambda n: D(n) / 100)


rates = st.integers(min_value=0, max_value=9999).map(lambda n: D(n) / 100)


@pytest.mark.parametrize(
    ("amount", "rate", "credited", "gst"),
    [
        ("1000.00", "28.00", "781.25", "218.75"),
        ("100.00", "28.00", "78.12", "21.88"),
        ("0.01", "28.00", "0.01", "0.00"),
        ("1000.00", "40.00", "714.29", "285.71"),
        ("100.00", "40.00", "71.43", "28.57"),
        ("0.07", "40.00", "0.05", "0.02"),  # 0.02 exactly: no half to round
    ],
)
def test_gst_split_of_the_rules_examples(amount, rate, credited, gst):
    split = formulas.gst_split(D(amount), rate_percent=D(rate))
    assert (split.credited, split.gst) == (D(credited), D(gst))


@given(paise, rates)
def test_gst_parts_add_up_and_round_half_up(amount, rate):
    split = formulas.gst_split(amount, rate_percent=rate)
    assert split.gst + split.credited == amount
    exact = amount * rate / (100 + rate)
    assert abs(split.gst - exact) <= D("0.005")
    assert split.gst >= 0 and split.credited > 0


@given(paise, rates)
def test_deposit_for_credit_credits_exactly_and_is_the_smallest(credited, rate):
    amount = deposit_for_credit(credited, rate_percent=rate)
    assert formulas.gst_split(amount, rate_percent=rate).credited == credited
    if amount > D("0.01"):
        assert formulas.gst_split(amount - D("0.01"), rate_percent=rate).credited < credited


@pytest.mark.parametrize("bad", [D(0), D("-1.00"), D("1.001")])
def test_gst_split_refuses_what_is_not_a_deposit(bad):
    with pytest.raises(formulas.TaxError):
        formulas.gst_split(bad, rate_percent=D(40))


@pytest.mark.parametrize("bad", [D(-1), D(100), D("40.001")])
def test_gst_split_refuses_what_is_not_a_rate(bad):
    with pytest.raises(formulas.TaxError):
        formulas.gst_split(D(100), rate_percent=bad)


def test_financial_year_runs_april_to_march_in_india():
    fy = formulas.financial_year("2026-27")
    assert fy.start == datetime(2026, 4, 1, tzinfo=formulas.INDIA)
    assert fy.end == datetime(2027, 4, 1, tzinfo=formulas.INDIA)
    assert fy.previous().label == "2025-26"
    # 31 March 2027 18:29 UTC is 23:59 IST: still 2026-27; 18:30 UTC is 1 April IST
    utc = datetime.fromisoformat
    assert formulas.financial_year_of(utc("2027-03-31T18:29:59+00:00")).label == "2026-27"
    assert formulas.financial_year_of(utc("2027-03-31T18:30:00+00:00")).label == "2027-28"
    assert formulas.financial_year("2000-01").start == datetime(2000, 4, 1, tzinfo=formulas.INDIA)
    assert formulas.financial_year("2098-99").end == datetime(2099, 4, 1, tzinfo=formulas.INDIA)
    assert fy.quarter(4) == (datetime(2027, 1, 1, tzinfo=formulas.INDIA), fy.end)


# years outside 2000-2098 (9999-00 crashed on year 10000; 1900-01 answered with a
# +05:21:10 offset), digits of other scripts, anything around the label
FY_REFUSED = ["9999-00", "0000-01", "0001-02", "1900-01", "1999-00", "2099-00", "२०२६-27",
              "٢٠٢٦-٢٧", "2026-27\n", " 2026-27", "2026-\uff12\uff17"]  # fmt: skip


@pytest.mark.parametrize("label", ["2026-28", "2026", "26-27", "", "2026-2027", *FY_REFUSED])
def test_financial_year_labels_are_checked(label):
    with pytest.raises(formulas.TaxError):
        formulas.financial_year(label)


def withdraw(amount, before=0, deposits=7000, opening=3000, taxed=0, threshold=0):
    return formulas.tds_at_withdrawal(
        amount=D(amount),
        withdrawn_before=D(before),
        deposits=D(deposits),
        opening=D(opening),
        taxed_before=D(taxed),
        rate_percent=D(30),
        threshold=D(threshold),
    )


def test_rule_133_worked_example():
    # opening 3,000, deposits 7,000 credited: withdraw 5,000 -> no TDS
    first = withdraw(5000)
    assert (first.net_winnings, first.tds, first.taxed) == (D(-5000), 0, 0)
    # then 7,000 -> net winnings 2,000, TDS 600, paid 6,400
    second = withdraw(7000, before=5000, taxed=first.taxed)
    assert (second.net_winnings, second.tds) == (D(2000), D(600))
    assert D(7000) - second.tds == D(6400)
    # a third withdrawal taxes only what is new
    third = withdraw(1000, before=12000, taxed=second.taxed)
    assert (third.net_winnings, third.tds) == (D(1000), D(300))


def test_tds_rounds_half_up_to_the_paisa():
    assert withdraw("0.05", deposits=0, opening=0).tds == D("0.02")  # 0.015 -> 0.02


def test_net_winnings_at_or_below_the_threshold_are_not_taxed_yet():
    small = withdraw(100, deposits=0, opening=0, threshold=100)
    assert (small.tds, small.taxed) == (0, 0)
    later = withdraw(50, before=100, deposits=0, opening=0, threshold=100)
    assert (later.net_winnings, later.tds) == (D(150), D(45))  # the earlier 100 is taxed now


def test_tds_never_exceeds_the_amount_withdrawn():
    capped = withdraw(10, before=90, deposits=0, opening=0, threshold=100)
    assert capped.net_winnings == D(100) and capped.tds == 0
    capped = withdraw(10, before=99, deposits=0, opening=0, threshold=100)
    assert capped.net_winnings == D(109) and capped.tds == D(10)


def test_year_end_taxes_what_is_left():
    due = formulas.tds_at_year_end(
        withdrawals=D(12000),
        closing=D(1500),
        deposits=D(7000),
        opening=D(3000),
        taxed_before=D(2000),
        rate_percent=D(30),
    )
    assert (due.net_winnings, due.tds) == (D(1500), D(450))


amounts = st.integers(min_value=0, max_value=10**8).map(lambda n: D(n) / 100)


@given(amounts, amounts, amounts, amounts, amounts, amounts)
def test_tds_is_never_negative_nor_more_than_the_amount(amount, before, dep, opening, taxed, th):
    due = withdraw(amount + D("0.01"), before, dep, opening, taxed, th)
    assert 0 <= due.tds <= amount + D("0.01")
    assert due.taxed in (0, due.net_winnings)


def test_net_winnings_whose_tds_rounds_to_nothing_are_not_counted_as_taxed():
    tiny = withdraw("0.01", deposits=0, opening=0)
    assert (tiny.net_winnings, tiny.tds, tiny.taxed) == (D("0.01"), 0, 0)
    later = withdraw("0.01", before="0.01", deposits=0, opening=0, taxed=tiny.taxed)
    assert (later.net_winnings, later.tds, later.taxed) == (D("0.02"), D("0.01"), D("0.02"))
