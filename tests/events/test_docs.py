"""docs/events.md's signature check, run as written against what the service signs."""

from __future__ import annotations

import re
import time
from pathlib import Path

from rummy_ledger.events.webhooks.signing import signature

DOC = (Path(__file__).resolve().parents[2] / "docs" / "events.md").read_text()


def snippet_verified():
    (code,) = [c for c in re.findall(r"```python\n(.*?)```", DOC, re.S) if "def verified" in c]
    namespace: dict = {}
    exec(code, namespace)
    return namespace["verified"]


def test_the_documented_check_accepts_what_the_service_signs_and_nothing_else():
    verified = snippet_verified()
    body = b'{"id":1,"type":"deal.settled","created_at":"2026-11-27T09:14:05+00:00","data":{}}'
    now = int(time.time())

    header = signature("whsec_abc", body, now)

    assert verified("whsec_abc", body, header)
    assert not verified("whsec_other", body, header)
    assert not verified("whsec_abc", body + b" ", header)
    assert not verified("whsec_abc", body, signature("whsec_abc", body, now - 3600))  # too old
    assert not verified("whsec_abc", body, "v1=00")
