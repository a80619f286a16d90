"""No function of the product grows past `MAX_LINES` lines (its `def` to its last line,
docstring included, decorators not): a longer one is split into named steps."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("rummy_ledger", "tournaments", "wallets")
MAX_LINES = 60


def function_lengths() -> dict[str, int]:
    """Every function and method of the product packages (migrations aside), by
    `path:line name`, with its length in lines."""
    out = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    where = f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"
                    out[where] = node.end_lineno - node.lineno + 1
    return out


def test_the_product_has_functions():
    assert len(function_lengths()) > 100  # the walk finds them: the test below is not vacuous


def test_no_product_function_is_longer_than_the_limit():
    too_long = {where: n for where, n in function_lengths().items() if n > MAX_LINES}
    assert too_long == {}
