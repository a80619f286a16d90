"""A game's terms as one frozen value, validated once. Pure: no Django.

A game copies its template's terms when it opens and keeps them as JSON (`GameTerms.to_json`,
the shape the API shows as `terms`), so an edit of the template never changes a game in play and
games stored before this class existed load unchanged (`GameTerms.from_json`). Everything else
reads the typed value: `terms.stake`, `terms.rules`, never a dict and a default.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from tournaments import rummy
from tournaments.errors import TermsInvalid
from wallets.money.amounts import amount_text

SPLIT_POLICIES = ("none", "equal", "drops", "drop_value")
POOL_FORMATS = ("pool101", "pool201")
ENTRY_BUCKETS = ("bonus", "deposit", "winnings", "chips")
HUNDRED = Decimal(100)
BONUS_CAP_PERCENT = Decimal("10.00")  # docs/rules.md: at most this share of an entry from bonus


@dataclass(frozen=True)
class GameTerms:
    template: str
    format: str
    currency: str
    seats: int
    point_value: Decimal | None
    entry_fee: Decimal | None
    stake: Decimal  # what each player puts into escrow on joining (points: the maximum loss)
    fee_percent: Decimal
    deals: int | None
    rules: rummy.RuleSet
    split_policy: str
    rejoin_allowed: bool
    entry_buckets: tuple[str, ...]
    bonus_cap_percent: Decimal = BONUS_CAP_PERCENT  # of the stake (points: the maximum loss)

    def __post_init__(self) -> None:
        if self.fee_percent < 0 or self.fee_percent >= HUNDRED:
            raise TermsInvalid("fee_percent", "the fee is a percentage from 0 to below 100")
        if self.stake <= 0:
            raise TermsInvalid("stake", "a game collects a positive amount from each player")
        for name in ("point_value", "entry_fee"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise TermsInvalid(name, "must be greater than zero")
        if not 0 <= self.bonus_cap_percent <= HUNDRED:
            raise TermsInvalid("bonus_cap_percent", "the bonus cap is a percentage from 0 to 100")
        for name in ("point_value", "entry_fee", "stake", "fee_percent", "bonus_cap_percent"):
            value = getattr(self, name)
            if value is not None and value != value.quantize(Decimal("0.01")):
                raise TermsInvalid(name, "has more than two decimal places")
        if self.split_policy not in SPLIT_POLICIES:
            raise TermsInvalid("split_policy", f"must be one of {', '.join(SPLIT_POLICIES)}")
        if self.format in POOL_FORMATS and self.rules.pool_limit is None:
            # without a limit nobody is ever eliminated and a split has no drops to count
            raise TermsInvalid(
                "rules", "a pool game needs a pool_limit: the pool101 or pool201 preset, or set it"
            )
        buckets = self.entry_buckets
        if not buckets or len(set(buckets)) != len(buckets) or set(buckets) - set(ENTRY_BUCKETS):
            raise TermsInvalid(
                "entry_buckets", f"a non-empty order of distinct buckets among {ENTRY_BUCKETS}"
            )

    def to_json(self) -> dict[str, Any]:
        return {
            "template": self.template,
            "format": self.format,
            "currency": self.currency,
            "seats": self.seats,
            "point_value": _str(self.point_value),
            "entry_fee": _str(self.entry_fee),
            "stake": amount_text(self.stake),
            "fee_percent": amount_text(self.fee_percent),
            "deals": self.deals,
            "rules": self.rules.to_dict(),
            "split_policy": self.split_policy,
            "rejoin_allowed": self.rejoin_allowed,
            "entry_buckets": list(self.entry_buckets),
            "bonus_cap_percent": amount_text(self.bonus_cap_percent),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameTerms:
        return cls(
            template=data["template"],
            format=data["format"],
            currency=data["currency"],
            seats=data["seats"],
            point_value=_decimal(data["point_value"], "point_value"),
            entry_fee=_decimal(data["entry_fee"], "entry_fee"),
            stake=_decimal(data["stake"], "stake"),
            fee_percent=_decimal(data["fee_percent"], "fee_percent"),
            deals=data["deals"],
            rules=ruleset_from_dict(data["rules"]),
            split_policy=data["split_policy"],
            rejoin_allowed=data["rejoin_allowed"],
            entry_buckets=tuple(data["entry_buckets"]),
            # games opened before the cap existed took bonus under the same default
            bonus_cap_percent=_decimal(
                data.get("bonus_cap_percent", BONUS_CAP_PERCENT), "bonus_cap_percent"
            ),
        )


def _str(value: Decimal | None) -> str | None:
    return None if value is None else amount_text(value)


def _decimal(value: Any, field: str) -> Decimal | None:
    if value is None:
        return None
    try:
        number = Decimal(value)
    except (InvalidOperation, TypeError, ValueError) as exc:
        raise TermsInvalid(field, f"{value!r} is not a decimal amount") from exc
    if not number.is_finite():
        raise TermsInvalid(field, f"{value!r} is not a decimal amount")
    return number


def ruleset_from_dict(rules: dict[str, Any]) -> rummy.RuleSet:
    # JSON lists (`deal_counts`) become tuples: the cache key must be hashable
    items = ((k, tuple(v) if isinstance(v, list) else v) for k, v in rules.items())
    return _ruleset_cached(tuple(sorted(items)))


@lru_cache(maxsize=256)
def _ruleset_cached(items: tuple) -> rummy.RuleSet:
    try:
        return rummy.RuleSet(**dict(items))
    except (rummy.RuleSetError, TypeError) as exc:
        raise TermsInvalid("rules", str(exc)) from exc
