"""What each package may import (the package docstrings say why): `wallets` never imports
`tournaments`; the rules engine, the payout formulas, the terms and the formats are pure (no
Django); the domain never imports the API layer, but for the model of its callers; the API layer
imports no app."""

import ast
import re
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


# --- raw SQL: the tables an app's SQL names -------------------------------------------------------
# Layers, lowest first: the project's base (Django's own tables, and the API client: the caller's
# model, which the domain names like the user model), the ledger (`wallets`), the games
# (`tournaments`). SQL names the tables and functions of its own layer and the layers below; the
# API layer's storage (the idempotency records, `idempotency_claim`) is the API layer's alone.
LAYERS = ("base", "wallets", "tournaments")
API_LAYER_TABLES = {"api_idempotencyrecord"}
SQL_WORDS = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|FROM|JOIN)\b")
COMMENT = re.compile(r"--[^\n]*")
NAME = re.compile(r"\b[a-z_][a-z0-9_]*\b")
FUNCTION = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+([a-z_][a-z0-9_]*)", re.IGNORECASE)
KNOWN = {
    # history: the data migration that gave deposits and withdrawals their client read it once
    "wallets/migrations/0010_deposit_and_withdrawal_owners.py: api_idempotencyrecord",
    # history: the deal intake's write claimed the key itself until 0014 replaced it (0014 reloads
    # this file when it is undone)
    "tournaments/migrations/0012_deal_intake.pg.sql: idempotency_claim",
}


def _layer_of(path: str) -> str:
    if path.startswith("rummy_ledger/api/"):
        return "api"
    return path.split("/")[0] if path.split("/")[0] in LAYERS else "base"


def _tables() -> dict[str, str]:
    """Every table and SQL function, by name, with the layer that owns it (a function: the
    layer whose migrations create it)."""
    from django.apps import apps

    owners = {
        name: _layer_of(str(path.relative_to(ROOT)))
        for package in ("rummy_ledger", "wallets", "tournaments")
        for path in (ROOT / package).rglob("*.sql")
        for name in FUNCTION.findall(path.read_text())
    }
    for model in apps.get_models(include_auto_created=True):
        label = model._meta.app_label
        table = model._meta.db_table
        if table in API_LAYER_TABLES:
            owners[table] = "api"
        else:
            owners[table] = label if label in LAYERS else "base"
    return owners


def _sql_texts(path: Path) -> list[str]:
    """The SQL in a file: a .sql file whole; in Python, the string literals that read as SQL
    (an f-string's `{Model._meta.db_table}` counts as the model's table)."""
    if path.suffix == ".sql":
        return [COMMENT.sub("", path.read_text())]
    from django.apps import apps

    by_model = {m.__name__: m._meta.db_table for m in apps.get_models()}
    texts = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            texts.append(node.value)
        elif isinstance(node, ast.JoinedStr):
            texts.append("".join(_fstring_part(part, by_model) for part in node.values))
    return [COMMENT.sub("", t) for t in texts if SQL_WORDS.search(t)]


def _fstring_part(part: ast.expr, by_model: dict[str, str]) -> str:
    if isinstance(part, ast.Constant):
        return str(part.value)
    expr = part.value if isinstance(part, ast.FormattedValue) else part
    source = ast.unparse(expr)
    model = source.removesuffix("._meta.db_table")
    return f" {by_model[model]} " if model != source and model in by_model else " "


def _sql_names_out_of_layer() -> list[str]:
    owners = _tables()
    order = {layer: n for n, layer in enumerate(LAYERS)}
    found = []
    for package in ("rummy_ledger", "wallets", "tournaments"):
        for path in sorted((ROOT / package).rglob("*")):
            if path.suffix not in (".py", ".sql"):
                continue
            relative = str(path.relative_to(ROOT))
            layer = _layer_of(relative)
            for text in _sql_texts(path):
                for table in sorted(set(NAME.findall(text)) & owners.keys()):
                    owner = owners[table]
                    if owner == layer or (
                        owner != "api" and layer != "api" and order[owner] <= order[layer]
                    ):
                        continue
                    if layer == "api" and owner == "base":
                        continue
                    found.append(f"{relative}: {table}")
    return sorted(set(found))


def test_raw_sql_names_only_its_own_layers_tables_and_those_below():
    assert [o for o in _sql_names_out_of_layer() if o not in KNOWN] == []
