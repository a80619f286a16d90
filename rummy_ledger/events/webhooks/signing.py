"""The signature of a delivery: `Rummy-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret,
"<t>.<raw body>")>` (docs/events.md shows a receiver checking it)."""

from __future__ import annotations

import hashlib
import hmac


def signature(secret: str, body: bytes, timestamp: int) -> str:
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={mac.hexdigest()}"


def signature_valid(secret: str, body: bytes, header: str) -> bool:
    """What a receiver checks (tested here, copied in docs/events.md)."""
    fields = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    if not fields.get("t", "").isdigit() or "v1" not in fields:
        return False
    expected = signature(secret, body, int(fields["t"]))
    return hmac.compare_digest(expected, f"t={fields['t']},v1={fields['v1']}")
