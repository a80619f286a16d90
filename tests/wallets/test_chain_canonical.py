"""The serialisation a link's hash is taken over (wallets/chain/canonical.py), as properties:
it reads back as the content it was made from (decimals as plain strings, times in UTC), does not
depend on the order of keys, and any change of content changes the hash."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wallets.chain.canonical import GENESIS, canonical, link_hash

amounts = st.decimals(min_value=Decimal("-1e15"), max_value=Decimal("1e15"), places=2).filter(
    lambda d: d != 0
)
times = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63), st.text(max_size=20))
leaves = st.one_of(scalars, amounts, times)
contents = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


def plain(value):
    """What the canonical text reads back as."""
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat(timespec="microseconds")
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


@given(contents)
def test_reads_back_as_its_content(content):
    assert json.loads(canonical(content)) == plain(content)


@given(st.dictionaries(st.text(max_size=8), leaves, min_size=2, max_size=6))
def test_the_order_of_keys_does_not_matter(content):
    backwards = dict(reversed(list(content.items())))
    assert canonical(backwards) == canonical(content)


@given(amounts, amounts, st.text(max_size=30), st.text(max_size=30), times)
def test_any_change_of_content_changes_the_hash(a, b, ref_a, ref_b, at):
    def transfer(amount, reference):
        return {"reference": reference, "created_at": at,
                "entries": [{"account": "x", "amount": amount, "currency": "INR"}]}  # fmt: skip

    same = (a == b and a.as_tuple() == b.as_tuple()) and ref_a == ref_b
    assert (
        link_hash(GENESIS, transfer(a, ref_a)) == link_hash(GENESIS, transfer(b, ref_b))
    ) == same


@given(contents, st.text(alphabet="0123456789abcdef", min_size=64, max_size=64))
def test_the_previous_link_is_covered(content, prev):
    assert (link_hash(prev, content) == link_hash(GENESIS, content)) == (prev == GENESIS)


def test_the_same_instant_in_another_zone_is_the_same_text():
    at = datetime(2026, 11, 27, 18, 30, tzinfo=UTC)
    ist = at.astimezone(timezone(timedelta(hours=5, minutes=30)))
    assert (
        canonical({"at": at})
        == canonical({"at": ist})
        == b'{"at":"2026-11-27T18:30:00.000000+00:00"}'
    )


@pytest.mark.parametrize("value", [datetime(2026, 1, 1), Decimal("NaN"), object()])
def test_what_has_no_canonical_form_is_refused(value):
    with pytest.raises((TypeError, ValueError)):
        canonical({"v": value})
