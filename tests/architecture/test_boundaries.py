"""What each package may import (the package docstrings say why): `wallets` never imports
`tournaments`; the rules engine, the payout formulas, the terms and the formats are pure (no
Django); the domain never imports the API layer, but for the model of its callers; the API layer
imports no app."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def imports_of(package: str) -> dict[str, set[str]]:
    out = {}
    for path in (ROOT / package).rglob("*.py"):
        if "migrations" in path.parts:
            continue
        names = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
        out[str(path.relative_to(ROOT))] = names
    return out


def offenders(package: str, forbidden: tuple[str, ...]) -> list[str]:
    return [
        f"{path}: {name}"
        for path, names in imports_of(package).items()
        for name in names
        if name.split(".")[0] in forbidden or name.startswith(forbidden)
    ]


def test_wallets_never_imports_tournaments():
    assert offenders("wallets", ("tournaments",)) == []


# The API client is the API layer's model (who calls, with which key and scopes); a game, a
# deposit, a withdrawal is owned by one, and the ledger's guards are set per client, so the
# domain names the model, as domain code names the user model. Nothing else of the layer.
CALLERS_MODEL = "rummy_ledger.api.models"


def test_domain_never_imports_the_api_layer():
    domain = [
        *offenders("wallets/services", ("rummy_ledger.api",)),
        *offenders("wallets/models", ("rummy_ledger.api",)),
        *offenders("wallets/tax", ("rummy_ledger.api",)),
        *offenders("tournaments/games/services", ("rummy_ledger.api",)),
        *offenders("tournaments/games/formats", ("rummy_ledger.api",)),
        *offenders("tournaments/tournaments/services", ("rummy_ledger.api",)),
    ]
    assert [o for o in domain if not o.endswith(f": {CALLERS_MODEL}")] == []
    # pure: not even that
    assert offenders("tournaments/games/formats", ("rummy_ledger.api",)) == []


def test_the_api_layer_imports_no_app():
    apps = ("wallets", "tournaments")
    assert offenders("rummy_ledger/api", apps) == []
    project = ["rummy_ledger/urls.py", "rummy_ledger/errors.py", "rummy_ledger/ids.py"]
    assert [o for o in offenders("rummy_ledger", apps) if o.split(":")[0] in project] == []


def test_the_formats_load_without_django():
    code = (
        "import sys; import tournaments.games.formats as f; "
        "print(sorted(f.FORMATS)); print('django' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    formats, django_loaded = result.stdout.splitlines()
    assert formats == "['deals', 'points', 'pool101', 'pool201', 'rummy500']"
    assert django_loaded == "False"


def test_pure_modules_import_no_framework():
    pure = ["tournaments/rummy", "tournaments/games/formats"]
    found = [o for p in pure for o in offenders(p, ("django", "rest_framework", "celery"))]
    for module in (
        "tournaments/payouts.py",
        "tournaments/games/terms.py",
        "tournaments/tournaments/terms.py",
        "tournaments/errors.py",
        "wallets/tax/formulas.py",
        "wallets/money/amounts.py",
    ):
        tree = ast.parse((ROOT / module).read_text())
        found += [
            f"{module}: {n.module}"
            for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("django")
        ]
    assert found == []
