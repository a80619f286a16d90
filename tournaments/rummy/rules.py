"""Every house-rule variant in one frozen value, plus the named presets (docs/rules.md).

A game template stores a spec (a preset name or a dict of overrides); ``rules_from_spec`` turns
it into a ``RuleSet`` and rejects anything unknown, so a typo never silently plays default rules.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

ACES_WILD = "aces_wild"
PRINTED_ONLY = "printed_only"
PURE_ONLY = "pure_only"
TWO_SEQUENCES = "two_sequences"
STAGED = "staged"
CAPPED = "capped"
FLAT = "flat"
MIN_PLAYERS, MAX_PLAYERS = 2, 6  # seats at a 13-card table
MAX_DEALS = 20  # a bound on what a template may list in `deal_counts`, not a rule of the seeds


class RuleSetError(ValueError):
    """A rule spec that names an unknown preset/field or gives a bad value; ``field`` says which."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(message)


@dataclass(frozen=True, slots=True)
class RuleSet:
    """House rules for 13-card rummy; the defaults are S0 (docs/rules.md "Rule presets")."""

    decks: int = 2  # the smallest tables' count when ``extra_deck_from`` is set
    extra_deck_from: int | None = None  # from this many players, one deck more (S1: 4)
    printed_jokers_per_deck: int = 1
    ace_points: int = 10
    printed_joker_cut: str = ACES_WILD  # wild card turned up is a PJ: aces wild, or PJ only
    max_jokers_per_sequence: int | None = None
    max_sequence_length: int | None = None
    identical_triple_is_pure: bool = False
    four_card_life: bool = False
    loser_gate: str = PURE_ONLY
    full_count_mode: str = CAPPED
    cap: int = 80
    first_drop_points: int = 20
    middle_drop_points: int = 40
    wrong_show_points: int = 80
    valid_second_points: int = 2
    auto_play_points: int = 80
    drops_allowed: bool = True
    # Deals (best of N): the N a game may play (2, 3 or 6), and those of them
    # that allow no drop (best of 2 and 3; best of 6 drops at 20/40). Defaults of
    # every preset, so only a template that names them plays another N or drops elsewhere.
    deal_counts: tuple[int, ...] = (2, 3, 6)
    no_drop_deals: tuple[int, ...] = (2, 3)
    pool_limit: int | None = None
    rejoin_below: int | None = None
    rejoin_inclusive: bool = False

    def __post_init__(self) -> None:
        for name in _DEAL_LISTS:  # JSON (a template's spec, a stored game) gives lists
            value = getattr(self, name)
            if isinstance(value, list):
                object.__setattr__(self, name, tuple(value))
        _validate(self)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def decks_for(self, players: int) -> int:
        """Decks dealt at a table of this many players (13-card rummy seats 2 to 6)."""
        if type(players) is not int or not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise ValueError(f"13-card rummy seats {MIN_PLAYERS} to {MAX_PLAYERS}, not {players!r}")
        more = self.extra_deck_from is not None and players >= self.extra_deck_from
        return self.decks + int(more)

    def allows_drops(self, deals: int | None = None) -> bool:
        """Whether a player may drop in a game of these rules (``deals``: a Deals game's N)."""
        return self.drops_allowed and deals not in self.no_drop_deals

    @property
    def most_decks(self) -> int:
        """The most decks any table under these rules uses: the bound for one hand on its own."""
        return self.decks + int(self.extra_deck_from is not None)


_CHOICES = {
    "printed_joker_cut": (ACES_WILD, PRINTED_ONLY),
    "loser_gate": (PURE_ONLY, TWO_SEQUENCES, STAGED),
    "full_count_mode": (CAPPED, FLAT),
}
_FIELDS = {f.name: f for f in fields(RuleSet)}
_DEAL_LISTS = ("deal_counts", "no_drop_deals")
_BOOLS = {"identical_triple_is_pure", "four_card_life", "drops_allowed", "rejoin_inclusive"}
_OPTIONAL_INTS = {
    "extra_deck_from",
    "max_jokers_per_sequence",
    "max_sequence_length",
    "pool_limit",
    "rejoin_below",
}


def override_kinds() -> dict[str, dict[str, Any]]:
    """What each field of a spec takes, as JSON Schema (the API documents a spec with it; the
    bounds beyond the type are `_validate`'s)."""
    kinds: dict[str, dict[str, Any]] = {}
    for name in _FIELDS:
        if name in _CHOICES:
            kinds[name] = {"type": "string", "enum": list(_CHOICES[name])}
        elif name in _BOOLS:
            kinds[name] = {"type": "boolean"}
        elif name in _DEAL_LISTS:
            deals = {"type": "integer", "minimum": 1, "maximum": MAX_DEALS}
            kinds[name] = {"type": "array", "items": deals, "uniqueItems": True}
        else:
            kinds[name] = {"type": "integer", "minimum": 0}
            if name in _OPTIONAL_INTS:
                kinds[name]["nullable"] = True
    return kinds


def _validate(r: RuleSet) -> None:
    for name in _FIELDS:
        value = getattr(r, name)
        if name in _CHOICES:
            if value not in _CHOICES[name]:
                raise RuleSetError(name, f"{name}: {value!r} is not one of {_CHOICES[name]}")
        elif name in _BOOLS:
            if not isinstance(value, bool):
                raise RuleSetError(name, f"{name}: {value!r} is not true/false")
        elif value is None and name in _OPTIONAL_INTS:
            continue
        elif name in _DEAL_LISTS:
            _validate_deal_list(name, value)
        elif type(value) is not int or value < 0:
            raise RuleSetError(name, f"{name}: {value!r} is not a non-negative integer")
    checks = (
        ("decks", 1 <= r.decks <= 3, "decks must be 1, 2 or 3"),
        (
            "extra_deck_from",
            r.extra_deck_from is None or MIN_PLAYERS < r.extra_deck_from <= MAX_PLAYERS,
            f"must be {MIN_PLAYERS + 1} to {MAX_PLAYERS} players (or null for a fixed deck count)",
        ),
        (
            "extra_deck_from",
            r.extra_deck_from is None or r.decks < 3,
            "one deck more than 3 is too many: set it to null for a fixed count of 3",
        ),
        ("printed_jokers_per_deck", r.printed_jokers_per_deck in (1, 2), "must be 1 or 2"),
        ("ace_points", r.ace_points in (1, 10), "ace_points must be 10 or 1"),
        (
            "max_jokers_per_sequence",
            r.max_jokers_per_sequence is None or r.max_jokers_per_sequence >= 1,
            "must be at least 1 (or null for no limit)",
        ),
        (
            "max_sequence_length",
            r.max_sequence_length is None or r.max_sequence_length >= 3,
            "must be at least 3 (or null for no limit)",
        ),
        ("cap", r.cap >= 1, "cap must be positive"),
        ("deal_counts", bool(r.deal_counts), "a deals game must be allowed some N"),
    )
    for name, ok, message in checks:
        if not ok:
            raise RuleSetError(name, f"{name}: {message} (got {getattr(r, name)!r})")


def _validate_deal_list(name: str, value: object) -> None:
    ok = isinstance(value, tuple) and all(type(n) is int and 1 <= n <= MAX_DEALS for n in value)
    if not ok or len(set(value)) != len(value):
        raise RuleSetError(
            name, f"{name}: {value!r} is not a list of distinct deal counts from 1 to {MAX_DEALS}"
        )


DEFAULT = RuleSet()

PRESETS: dict[str, RuleSet] = {
    "S0": DEFAULT,
    # S1: 2 decks + 4 PJ for 2-3 players, 3 decks + 6 PJ for 4-6; first/second life, ace = 1,
    # one joker per sequence, PJ cut = only PJs, flat 80.
    "S1": replace(
        DEFAULT,
        decks=2,
        extra_deck_from=4,
        printed_jokers_per_deck=2,
        ace_points=1,
        printed_joker_cut=PRINTED_ONLY,
        max_jokers_per_sequence=1,
        identical_triple_is_pure=True,
        four_card_life=True,
        loser_gate=TWO_SEQUENCES,
        full_count_mode=FLAT,
    ),
    # S3: two decks and two jokers; a loser's groups count in stages. "No sequence longer than
    # four" is advice to the player, so no max_sequence_length here (docs/rules.md "S3").
    "S3": replace(DEFAULT, loser_gate=STAGED),
    "pool101": replace(DEFAULT, pool_limit=101, rejoin_below=79),
    "pool201": replace(
        DEFAULT, pool_limit=201, rejoin_below=174, first_drop_points=25, middle_drop_points=50
    ),
    # Deals: what sets it apart (N of 2, 3 or 6; no drop at 2 and 3) is the default of every
    # preset (`deal_counts`, `no_drop_deals`), so a deals template on S1 or S3 keeps it too.
    "deals": DEFAULT,
}


def rules_from_spec(spec: str | dict[str, Any] | RuleSet | None) -> RuleSet:
    """A preset name, a dict of field overrides (``"preset"`` picks the base), or None."""
    if spec is None:
        return DEFAULT
    if isinstance(spec, RuleSet):
        return spec
    if isinstance(spec, str):
        if spec not in PRESETS:
            raise RuleSetError("preset", f"unknown preset {spec!r} (known: {sorted(PRESETS)})")
        return PRESETS[spec]
    if not isinstance(spec, dict):
        raise RuleSetError("spec", f"rules must be a preset name or an object, not {spec!r}")
    overrides = dict(spec)
    base = rules_from_spec(overrides.pop("preset", "S0"))
    for name in overrides:
        if name not in _FIELDS:
            raise RuleSetError(name, f"unknown rule field {name!r}")
    try:
        return replace(base, **overrides)
    except TypeError as exc:  # pragma: no cover - guarded by the field check above
        raise RuleSetError("spec", str(exc)) from exc


def is_eliminated(score: int, rules: RuleSet) -> bool:
    """Pool: a total reaching the limit eliminates (>= 101, >= 201)."""
    return rules.pool_limit is not None and score >= rules.pool_limit


def can_rejoin(remaining_scores: list[int], rules: RuleSet) -> bool:
    """Pool rejoin is open while every remaining player is below the bound (< 79, < 174)."""
    if rules.rejoin_below is None:
        return False
    bound = rules.rejoin_below
    if rules.rejoin_inclusive:
        return all(s <= bound for s in remaining_scores)
    return all(s < bound for s in remaining_scores)


def rejoin_score(remaining_scores: list[int]) -> int:
    """A rejoined player starts at the highest remaining score + 1."""
    return max(remaining_scores, default=0) + 1
