"""Test tooling: pytest's summary line (CI reads it) and a test database per checkout."""

import hashlib
import os
import re
import subprocess
import sys

import pytest
from django.conf import settings
from django.db import connection


def test_pytest_run_as_the_readme_says_prints_the_summary_line():
    # -q on the command line and -q in addopts made -qq, which prints no "N passed" line
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q",
         "tests/ops/test_supervisor.py::test_backoff_doubles_from_the_first_delay_and_is_capped"],
        cwd=settings.BASE_DIR, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"^1 passed in [\d.]+s$", result.stdout, re.MULTILINE), result.stdout


@pytest.mark.django_db
@pytest.mark.skipif("TEST_DATABASE_NAME" in os.environ, reason="named explicitly")
def test_the_test_database_is_named_after_the_checkout():
    checkout = hashlib.sha256(str(settings.BASE_DIR).encode()).hexdigest()[:8]
    worker = os.environ.get("PYTEST_XDIST_WORKER")  # pytest-xdist: one database per worker
    suffix = f"_{worker}" if worker else ""
    assert connection.settings_dict["NAME"] == f"test_rummy_ledger_{checkout}{suffix}"
