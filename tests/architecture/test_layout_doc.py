"""docs/layout.md (the README's map of the code) matches the tree: every module of the product's
packages and of ha/ is named there, and every module it names exists. A new module without a
line in the map, or a line left behind by a move, fails here."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("rummy_ledger", "wallets", "tournaments", "ha")
LAYOUT = (ROOT / "docs" / "layout.md").read_text()


def modules() -> set[str]:
    """Module names (without .py) under the packages; migrations, package files and management
    commands (named by the README's commands) aside."""
    return {
        path.stem
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if path.stem != "__init__" and not {"migrations", "commands"} & set(path.parts)
    }


NAMED = set(re.findall(r"\b([a-z][a-z0-9_]*)\.py\b", LAYOUT))


def test_every_module_has_a_line_in_the_layout():
    assert sorted(modules() - NAMED) == []


def test_every_module_the_layout_names_exists():
    assert sorted(NAMED - modules() - {"manage", "conftest", "builders"}) == []
