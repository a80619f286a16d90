"""Rules-engine cost in CPU instructions: deterministic, so a busy machine cannot blur it.

Run: ``.venv/bin/python bench/rules_instructions.py`` (needs valgrind). Each workload runs in its
own Python under ``valgrind --tool=callgrind`` with its string hashes fixed; what Python's start-up
costs (the ``none`` workload: the same imports, no work) is subtracted. The engine's counts are
given per declaration and per best arrangement, and as a ratio to the baseline (sorting 13 ints, as
bench/rules.py), so two commits compare by running this on each. The last line is one JSON object.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.rules import random_grouping, random_hand, valid_grouping
from tournaments.rummy import best_arrangement, evaluate_declaration
from tournaments.rummy.cards import NAMES

DECLARATIONS, ARRANGEMENTS, SORTS = 2_000, 100, 20_000


def workload(name: str) -> None:
    """The fixed work counted (inputs built in every workload, so only the work differs)."""
    rng = random.Random(20240601)
    declarations = [
        (valid_grouping(rng, 0) if i % 2 else random_grouping(rng), NAMES[rng.randrange(53)])
        for i in range(DECLARATIONS)
    ]
    hands = [random_hand(rng, rng.randrange(5)) for _ in range(ARRANGEMENTS)]
    sorts = [[rng.randrange(53) for _ in range(13)] for _ in range(SORTS)]
    if name == "declarations":
        for groups, wild in declarations:
            evaluate_declaration(groups, wild)
    elif name == "arrangements":
        for cards, wild in hands:
            best_arrangement(cards, wild)
    elif name == "baseline":
        for cards in sorts:
            sorted(cards)


def instructions(name: str) -> int:
    with tempfile.TemporaryDirectory() as out:
        run = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}/cg.out",
             sys.executable, __file__, "--workload", name],
            capture_output=True, text=True, check=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},  # str hashes (sets, dicts) fixed too
        )  # fmt: skip
    return int(re.search(r"Collected : (\d+)", run.stderr).group(1))


def main() -> None:
    if sys.argv[1:2] == ["--workload"]:
        workload(sys.argv[2])
        return
    start_up = instructions("none")
    counts = {
        name: instructions(name) - start_up for name in ("baseline", "declarations", "arrangements")
    }
    per_sort = counts["baseline"] / SORTS
    figures = {
        "instructions_per_sort_of_13": round(per_sort),
        "instructions_per_declaration": round(counts["declarations"] / DECLARATIONS),
        "instructions_per_arrangement": round(counts["arrangements"] / ARRANGEMENTS),
    }
    figures["declaration_x_sort"] = round(figures["instructions_per_declaration"] / per_sort, 2)
    figures["arrangement_x_sort"] = round(figures["instructions_per_arrangement"] / per_sort, 1)
    for key, value in figures.items():
        print(f"{key}: {value:,}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
