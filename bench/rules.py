"""Rules-engine speed: declarations/s, best arrangements/s and the worst single arrangement.

Run: ``.venv/bin/python bench/rules.py [--quick]``. No Django, no database. Each figure is also
given as a ratio to a baseline measured in the same run (sorting 13 ints), so runs on noisy or
different machines can be compared. The last line is one JSON object with every figure.
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tournaments.rummy import DEFAULT, best_arrangement, evaluate_declaration
from tournaments.rummy.cards import NAMES, PJ

GOALS = {"evaluations_per_s": 75_000, "arrangements_per_s": 2_000, "worst_arrangement_ms": 20.0}


def baseline_ops_per_s(seconds: float = 0.5) -> float:
    """Sorting 13 ints in pure Python: the unit every figure is compared with."""
    rng = random.Random(1)
    data = [[rng.randrange(53) for _ in range(13)] for _ in range(1000)]
    n = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for d in data:
            sorted(d)
        n += len(data)
    return n / (time.perf_counter() - start)


def deck(rng: random.Random) -> list[int]:
    cards = list(range(52)) * DEFAULT.decks + [PJ] * (
        DEFAULT.decks * DEFAULT.printed_jokers_per_deck
    )
    rng.shuffle(cards)
    return cards


def valid_grouping(rng: random.Random, wild: int) -> list[list[str]]:
    """A random valid show: pure run, impure run (with a printed joker), then runs or sets."""
    suits = rng.sample(range(4), 4)
    groups = []
    lo = rng.randrange(0, 9)
    groups.append([suits[0] * 13 + lo + i for i in range(4)])
    lo = rng.randrange(0, 10)
    groups.append([suits[1] * 13 + lo, suits[1] * 13 + lo + 1, PJ])
    r = rng.randrange(13)
    groups.append([s * 13 + r for s in rng.sample(range(4), 3)])
    lo = rng.randrange(0, 10)
    groups.append([suits[2] * 13 + lo + i for i in range(3)])
    rng.shuffle(groups)
    return [[NAMES[c] for c in g] for g in groups]


def random_grouping(rng: random.Random) -> list[list[str]]:
    cards = deck(rng)[:13]
    sizes = rng.choice([(3, 3, 3, 4), (4, 3, 3, 3), (3, 3, 4, 3), (5, 4, 4)])
    out, at = [], 0
    for s in sizes:
        out.append([NAMES[c] for c in cards[at : at + s]])
        at += s
    return out


def random_hand(rng: random.Random, jokers: int) -> tuple[list[str], str]:
    wild = rng.randrange(52)
    w = wild % 13
    pool = [c for c in deck(rng) if c != PJ and c % 13 != w]
    hand = pool[: 13 - jokers]
    for _ in range(jokers):
        hand.append(PJ if rng.random() < 0.3 else rng.randrange(4) * 13 + w)
    rng.shuffle(hand)
    return [NAMES[c] for c in hand], NAMES[wild]


def bench_evaluations(rng: random.Random, seconds: float) -> tuple[float, float]:
    cases = []
    for i in range(4000):
        wild = NAMES[rng.randrange(53)]
        groups = valid_grouping(rng, 0) if i % 2 else random_grouping(rng)
        cases.append((groups, wild))
    valid = sum(evaluate_declaration(g, w).valid for g, w in cases) / len(cases)
    n = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for g, w in cases:
            evaluate_declaration(g, w)
        n += len(cases)
    return n / (time.perf_counter() - start), valid


def bench_arrangements(rng: random.Random, count: int) -> tuple[float, float, dict]:
    hands = [random_hand(rng, rng.randrange(5)) for _ in range(count)]
    worst = 0.0
    worst_hand: dict = {}
    clock = time.perf_counter
    start = clock()
    for cards, wild in hands:
        t0 = clock()
        best_arrangement(cards, wild)
        dt = clock() - t0
        if dt > worst:
            worst, worst_hand = dt, {"cards": cards, "wild": wild}
    total = clock() - start
    return count / total, worst * 1000, worst_hand


def main() -> None:
    quick = "--quick" in sys.argv
    rng = random.Random(20240601)
    base = baseline_ops_per_s()
    evals, valid_share = bench_evaluations(rng, 1.0 if quick else 3.0)
    arr, worst_ms, worst_hand = bench_arrangements(rng, 1000 if quick else 5000)
    figures = {
        "baseline_sorts_per_s": round(base),
        "evaluations_per_s": round(evals),
        "evaluations_valid_share": round(valid_share, 3),
        "evaluations_ratio": round(evals / base, 4),
        "arrangements_per_s": round(arr),
        "arrangements_ratio": round(arr / base, 5),
        "worst_arrangement_ms": round(worst_ms, 2),
        "worst_arrangement_x_baseline_op": round(worst_ms / 1000 * base, 1),
        "worst_hand": worst_hand,
        "goals": GOALS,
        "goals_met": {
            "evaluations_per_s": evals >= GOALS["evaluations_per_s"],
            "arrangements_per_s": arr >= GOALS["arrangements_per_s"],
            "worst_arrangement_ms": worst_ms < GOALS["worst_arrangement_ms"],
        },
    }
    print(f"baseline: {base:,.0f} sorts of 13 ints/s")
    print(f"declarations evaluated: {evals:,.0f}/s  ({evals / base:.4f} x baseline)  goal 75,000")
    print(f"best arrangements: {arr:,.0f}/s  ({arr / base:.5f} x baseline)  goal 2,000")
    print(f"worst best arrangement: {worst_ms:.2f} ms  goal < 20 ms")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
