"""The presets table of docs/rules.md says what the presets are: every variant of ``RuleSet`` has
a row, and every row matches ``PRESETS``."""

from dataclasses import fields
from pathlib import Path

from tournaments.rummy import DEFAULT, PRESETS

PAGE = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
COLUMNS = ["S0", "S1", "S3", "pool101", "pool201", "deals"]


def cell(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, tuple):
        return ", ".join(map(str, value))
    return str(value)


def readme_rows() -> dict[str, list[str]]:
    text = PAGE.read_text(encoding="utf-8").split("## Rule presets", 1)[1].split("\n#", 1)[0]
    rows = {}
    for line in text.splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows[cells[0].strip("`")] = cells[1 : 1 + len(COLUMNS)]
    return rows


def test_readme_presets_table_matches_the_presets():
    rows = readme_rows()
    assert list(rows) == [f.name for f in fields(DEFAULT)], "one row per variant, in order"
    for name, cells in rows.items():
        assert cells == [cell(getattr(PRESETS[p], name)) for p in COLUMNS], name
