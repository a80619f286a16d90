"""docs/rules.md: every figure of its worked examples (groups, hands, points, fees, payouts,
splits, chips, Rummy 500 scores, refunds by bucket) is what the engine and the payout formulas
give. Pure: no database. The presets table is tests/rummy/test_readme_presets.py's."""

import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest

from tournaments import payouts
from tournaments.games.formats import DEALS, Table, game_terms
from tournaments.rummy import PRESETS, can_rejoin, classify_group, rejoin_score, score_result
from tournaments.rummy.rummy500 import score_hand

DOC = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
RUPEES = re.compile(r"₹([\d,]+\.\d\d)")


def section(title: str) -> str:
    """The text under the heading `title` up to the next heading of its level or above."""
    text = DOC.read_text(encoding="utf-8")
    match = re.search(rf"^(#+) {re.escape(title)}\n", text, re.M)
    assert match, f"no heading {title!r} in docs/rules.md"
    level = len(match.group(1))
    rest = text[match.end() :]
    end = re.search(rf"^#{{1,{level}}} ", rest, re.M)
    return rest[: end.start()] if end else rest


def table(text: str) -> list[list[str]]:
    """The body rows of the first table in `text`, as stripped cells."""
    lines = [line for line in text.splitlines() if line.startswith("|")]
    assert len(lines) > 2, "no table"
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines[2:]]


def flat(text: str) -> str:
    """Prose with its line breaks as spaces."""
    return re.sub(r"\s+", " ", text)


def spans(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def rupees(cell: str) -> Decimal:
    (amount,) = RUPEES.findall(cell)
    return Decimal(amount.replace(",", ""))


def amounts(text: str) -> set[Decimal]:
    return {Decimal(a.replace(",", "")) for a in RUPEES.findall(text)}


def number(pattern: str, text: str) -> str:
    match = re.search(pattern, text)
    assert match, pattern
    return match.group(1)


def test_group_examples():
    rows = table(section("Groups"))
    assert len(rows) >= 15
    for group, wild, preset, kind in rows:
        result = classify_group(spans(group)[0], spans(wild)[0], PRESETS[preset])
        assert result.kind == kind, (group, wild, preset)


def test_hand_examples():
    rows = table(section("Worked examples: hands"))
    assert len(rows) >= 20
    for hand, wild, preset, posted, scored, points in rows:
        groups = [g.split() for g in spans(hand)] or None
        wild_joker = spans(wild)[0] if groups else None
        got = score_result(posted, PRESETS[preset], groups=groups, wild_joker=wild_joker)
        assert (str(got.outcome), got.points) == (scored, int(points)), (hand, preset, posted)


def test_fee_examples():
    rows = table(section("The rounding rule"))
    assert rows
    for percent, of, fee in rows:
        assert payouts.fee_of(rupees(of), Decimal(percent)) == rupees(fee), (percent, of)


def test_points_example():
    text = section("Points rummy (one deal)")
    players, value, fee_percent = re.search(
        r"(\d+) players at ₹([\d.]+) a point, fee (\d+) %", text
    ).groups()
    point_value = Decimal(value)
    stake = point_value * PRESETS["S0"].cap
    assert f"₹{stake:.0f} at ₹{point_value:.0f} a point" in flat(text)
    rows = table(text)
    assert len(rows) == int(players)
    winner = next(r[0].split()[0] for r in rows if "winner" in r[0])
    points = {r[0].split()[0]: int(r[1]) for r in rows}
    got = payouts.points_settlement(
        stakes=dict.fromkeys(points, stake),
        points=points,
        winner=winner,
        point_value=point_value,
        fee_percent=Decimal(fee_percent),
    )
    for name, _, staked, pays, back, receives in rows:
        player = name.split()[0]
        assert rupees(staked) == stake
        assert rupees(back) == got.refunds[player], player
        assert rupees(pays) == stake - got.refunds[player], player
        assert rupees(receives) == got.payouts.get(player, Decimal("0.00")), player
    lost = sum(stake - r for p, r in got.refunds.items() if p != winner)
    line = (
        f"The losers pay ₹{lost:,.2f}; the fee is ₹{got.fee:,.2f}; collected "
        f"₹{got.total:,.2f} = ₹{got.payouts[winner]:,.2f} + ₹{got.fee:,.2f} + "
        f"₹{sum(got.refunds.values()):,.2f} back."
    )
    assert line in flat(text)
    assert got.total == stake * len(points)


def test_pool_rejoin_example():
    text = section("Pool rummy (101 or 201)")
    rules = PRESETS["pool101"]
    scores = re.search(r"b has (\d+), c (\d+), d (\d+)", text).groups()
    out = int(number(r"a\s+has (\d+) and is out", text))
    assert out >= rules.pool_limit
    remaining = [int(s) for s in scores]
    assert f"starts at {rejoin_score(remaining)};" in flat(text)
    assert f"below {rules.rejoin_below})" in flat(text)
    assert f"had c reached {rules.rejoin_below}, rejoin would be closed" in flat(text)
    assert can_rejoin(remaining, rules)
    assert can_rejoin([remaining[0], rules.rejoin_below, remaining[2]], rules) is False
    for listed, rejoin, starts in table(text):
        listed_scores = [int(s) for s in listed.split(",")]
        assert can_rejoin(listed_scores, rules) is (rejoin == "yes"), listed
        expected = str(rejoin_score(listed_scores)) if rejoin == "yes" else "—"
        assert starts == expected, listed


def test_split_example():
    pool = section("Pool rummy (101 or 201)")
    entry = Decimal(number(r"₹(\d+) entry", pool))
    fee_percent = Decimal(number(r"₹\d+ entry, fee (\d+) %", pool))
    text = section("Split")
    rules = PRESETS["pool101"]
    rows = table(text)
    prize = entry * 4  # a, b, c and d entered
    drops = {}
    for player, score, left, *_ in rows:
        drops[player] = payouts.drops_left(int(score), rules.pool_limit, rules.first_drop_points)
        assert int(left) == drops[player], player
    equal = payouts.split_settlement(
        prize=prize, weights=dict.fromkeys(drops, 1), fee_percent=fee_percent
    )
    by_drops = payouts.split_settlement(
        prize=prize, weights={p: d + 1 for p, d in drops.items()}, fee_percent=fee_percent
    )
    by_value = payouts.split_by_drop_value(
        prize=prize, drops=drops, entry_fee=entry, fee_percent=fee_percent
    )
    for player, _, _, eq, dr, dv in rows:
        assert rupees(eq) == equal.payouts[player], player
        assert rupees(dr) == by_drops.payouts[player], player
        assert rupees(dv) == by_value.payouts[player], player
    pot = prize - equal.fee
    fewest = min(drops.values())
    extras = [entry * (d - fewest) for d in drops.values()]
    assert f"₹{prize:.0f} collected, fee {fee_percent} % = ₹{equal.fee:.2f}" in flat(text)
    assert f"₹{pot:.2f} to share" in flat(text)
    weights = [str(d + 1) for d in drops.values()]
    assert f"weights are {', '.join(weights[:-1])} and {weights[-1]}" in flat(text)
    paid = [e for e in extras if e]
    assert f"₹{paid[0]:.2f} and ₹{paid[1]:.2f}, and the ₹{pot - sum(extras):.2f} left" in flat(text)
    known = {equal.fee, pot, pot - sum(extras), *extras}
    known |= {a for s in (equal, by_drops, by_value) for a in s.payouts.values()}
    assert amounts(text) <= known, amounts(text) - known


@dataclass
class Seat:
    external_id: str
    score: int = 0
    eliminated: bool = False


def test_deals_example():
    text = section("Deals rummy (best of N)")
    best_of, players, entry, fee_percent = re.search(
        r"best of (\d+), (\d+) players at ₹(\d+) \(₹\d+\), fee (\d+) %", text
    ).groups()
    terms = game_terms(
        template="doc",
        format="deals",
        currency="INR",
        chips=False,
        seats=int(players),
        point_value=None,
        entry_fee=Decimal(entry),
        fee_percent=Decimal(fee_percent),
        deals=int(best_of),
        rules=None,
        split_policy="none",
        rejoin_allowed=False,
        entry_buckets=("bonus", "deposit", "winnings"),
    )
    collected = Decimal(entry) * int(players)
    assert f"(₹{collected:.0f})" in flat(text)
    assert f"({DEALS.opening_score(terms)} in best of {best_of})" in flat(text)
    rows = table(text)
    names = ["a", "b", "c"][: int(players)]
    seats = [Seat(n, DEALS.opening_score(terms)) for n in names]
    assert [int(c) for c in rows[0][3:]] == [s.score for s in seats]
    settlement = None
    for deal, won, given, *chips in rows[1:]:
        results = [{"player": n, "outcome": "declared" if n == won else "lost"} for n in names]
        points = dict.fromkeys(names, 0)
        points.update({p: int(v) for p, v in (g.split() for g in given.split(","))})
        table_now = Table(terms, seats, collected, int(deal))
        settlement = DEALS.apply_deal(table_now, results, points)
        assert [int(c) for c in chips] == [s.score for s in seats], deal
    assert settlement is not None
    (leader,) = settlement.payouts
    line = (
        f"{leader} leads after {best_of} deals and receives ₹{settlement.payouts[leader]:.2f}; "
        f"the fee is ₹{settlement.fee:.2f}."
    )
    assert line in flat(text)


def test_rummy500_examples():
    rows = table(section("Rummy 500"))
    assert rows
    for melded, laid, in_hand, score in rows:
        laid_off = []
        if laid != "—":
            card, target = spans(laid)
            laid_off.append((card, target.split()))
        got = score_hand(
            [m.split() for m in spans(melded)], laid_off, " ".join(spans(in_hand)).split()
        )
        assert got == int(score), melded


def test_bucket_example():
    text = section("Buckets and the bonus cap")
    rows = table(text)
    contributed = [(bucket, rupees(paid)) for bucket, paid, _, _ in rows]
    total = sum(a for _, a in contributed)
    assert f"the ₹{total:.2f} stake" in flat(text)
    bonus = dict(contributed)["bonus"]
    cap = Decimal(number(r"\((\d+) %\)", text))
    assert payouts.bonus_cap(total, cap) == bonus
    lost = Decimal(number(r"loses ₹([\d.]+)", text))
    back = dict(payouts.refund_by_bucket(contributed, total - lost, rounded_down="bonus"))
    assert f"₹{total - lost:.2f} comes back" in flat(text)
    for bucket, paid, lost_cell, back_cell in rows:
        assert rupees(back_cell) == back[bucket], bucket
        assert rupees(lost_cell) == rupees(paid) - back[bucket], bucket


def test_every_path_the_page_names_exists():
    text = DOC.read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:tournaments|tests)/[\w/.]+)`", text))
    modules = {
        f"{d}/{m}"
        for d, ms in re.findall(r"`(tournaments/[\w/]+/)` \(([^)]*)\)", text)
        for m in re.findall(r"`(\w+\.py)`", ms)
    }
    assert named and modules
    missing = sorted(p for p in named | modules if not (DOC.parents[1] / p).exists())
    assert missing == []


def test_links_within_the_page_reach_a_heading():
    text = DOC.read_text(encoding="utf-8")
    headings = {
        re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-")
        for h in re.findall(r"^#+ (.+)$", text, re.M)
    }
    links = set(re.findall(r"\]\(#([^)]+)\)", text))
    assert links and links <= headings, links - headings


@pytest.mark.parametrize("title", ["Worked examples: hands", "Groups", "Split", "Rummy 500"])
def test_sections_exist(title):
    assert section(title).strip()
