"""The signature of a delivery: `Rummy-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret,
"<t>.<raw body>")>` (docs/events.md shows a receiver checking it)."""

from __future__ import annotations

import hashlib
import hmac


def signature(secret: str, body: bytes, timestamp: int) -> str:
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={mac.hexdigest()}"
