"""A template's terms as a game keeps them: copied at opening, so template edits never touch a
game in play. Amounts are decimal strings; the rules are the engine's resolved `RuleSet`."""

from __future__ import annotations

from decimal import Decimal
from functools import lru_cache
from typing import Any

from rummy_ledger.errors import DomainError
from tournaments import rummy
from tournaments.models import Format, GameTemplate
from wallets.models import CHIPS

# The engine preset a format plays by when its template names none.
FORMAT_PRESET = {
    Format.POINTS: "S0",
    Format.POOL101: "pool101",
    Format.POOL201: "pool201",
    Format.DEALS: "deals",
    Format.RUMMY500: "S0",
}
THIRTEEN_CARD = {Format.POINTS, Format.POOL101, Format.POOL201, Format.DEALS}
POOL = {Format.POOL101, Format.POOL201}


class TemplateInvalid(DomainError):
    code = "template_invalid"


def template_ruleset(template: GameTemplate) -> rummy.RuleSet:
    spec: Any = template.rules or {}
    if isinstance(spec, dict) and "preset" not in spec:
        spec = {"preset": FORMAT_PRESET[template.format], **spec}
    try:
        return rummy.rules_from_spec(spec)
    except rummy.RuleSetError as exc:
        raise TemplateInvalid(f"template {template.slug}: {exc}") from exc


def template_terms(template: GameTemplate) -> dict[str, Any]:
    chips = template.currency == CHIPS
    rules = template_ruleset(template)
    if template.format == Format.POINTS:
        stake = template.point_value * rules.cap
    else:
        stake = template.entry_fee
    return {
        "template": template.slug,
        "format": template.format,
        "currency": template.currency,
        "seats": template.seats,
        "point_value": _str(template.point_value),
        "entry_fee": _str(template.entry_fee),
        "stake": f"{stake:.2f}",
        "fee_percent": "0.00" if chips else f"{template.fee_percent:.2f}",
        "deals": template.deals if template.format == Format.DEALS else None,
        "rules": rules.to_dict(),
        "split_policy": template.split_policy,
        "rejoin_allowed": template.rejoin_allowed,
        "entry_buckets": ["chips"] if chips else list(template.entry_buckets),
    }


def _str(value: Decimal | None) -> str | None:
    return None if value is None else f"{value:.2f}"


@lru_cache(maxsize=256)
def _ruleset_cached(items: tuple) -> rummy.RuleSet:
    return rummy.RuleSet(**dict(items))


def game_ruleset(terms: dict[str, Any]) -> rummy.RuleSet:
    return _ruleset_cached(tuple(sorted(terms["rules"].items())))


def money(terms: dict[str, Any], name: str) -> Decimal:
    return Decimal(terms[name])
