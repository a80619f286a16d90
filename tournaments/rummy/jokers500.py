"""A Rummy 500 joker keeps the card it stands for (docs/rules.md "Rummy 500"). Pure: no Django, no
I/O.

When a meld is laid, each joker is fixed: by its name (``PJ=8C``); by the only card that fits;
or, where several fit, by the meld's arrangement, the way a player says it ("6C 7C
Joker: laid in this order, the joker is 8C"): the cards as listed run up (or down)
through the cards that are not jokers, and each joker is the card of its place. Where neither
fixes it (``6C PJ 7C``; ``9D PJ PJ``, which may be a set of nines or one of three sequences) the
deal must name it. A joker in a set stands for its rank (no suit need be said) and stays
``PJ``. A lay-off never changes a fixed joker: ``4C`` on ``6C 7C PJ`` is refused.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from .cards import NAMES, PJ
from .rummy500 import MeldError, Token, kind_of, meld_kind, parse_joker


class JokerNotFixed(MeldError):
    """A joker the meld leaves open: it could stand for any of ``could_be``; name it."""

    def __init__(self, meld: Sequence[str], place: int, could_be: list[str]) -> None:
        self.meld, self.place, self.could_be = list(meld), place, could_be
        super().__init__(
            f"the joker at place {place} could stand for {' or '.join(could_be)}: "
            f"name it (e.g. PJ={could_be[0].split()[-1]})"
        )


class JokerChanged(MeldError):
    """A lay-off that needs a melded joker to stand for another card than the one it was fixed
    as (``joker``: ``PJ=8C``)."""

    def __init__(self, meld: Sequence[str], joker: str, reason: str) -> None:
        self.meld, self.joker = list(meld), joker
        super().__init__(f"its joker {joker} keeps that card: {reason}")


def fix_meld(meld: Sequence[Token], *, arranged: bool = True) -> list[str]:
    """The meld in canonical notation with every sequence joker named (``PJ=8C``), or MeldError
    (JokerNotFixed when a joker could be more than one card). ``arranged=False``: the order of
    the cards says nothing (a laid-off card joins a meld at either end)."""
    parsed = [parse_joker(t) for t in meld]
    kind_of([c for c, _ in parsed], [n for _, n in parsed])  # the shape, with its reasons
    names = [_token(c, n) for c, n in parsed]
    open_places = [i for i, (c, n) in enumerate(parsed) if c == PJ and n is None]
    if not open_places:
        return names
    known = [
        (i, n if c == PJ else c) for i, (c, n) in enumerate(parsed) if c != PJ or n is not None
    ]
    windows = _windows([card for _, card in known], len(meld))
    as_set = _could_be_set([card for _, card in known], len(meld))
    if as_set and not windows:
        return names  # a set: its jokers stand for its rank, no suit said
    suit = known[0][1] // 13
    readings = _arranged(known, len(meld), windows) if arranged else []
    if len(windows) == 1 and not as_set:
        lo = windows[0]
        places = readings[0][1] if readings else _in_order(known, open_places, lo, len(meld))
    elif len(readings) == 1 and not as_set:
        places = readings[0][1]
    else:
        could_be = sorted({_card(suit, lo + j) for lo in windows for j in range(len(meld))})
        taken = {card for _, card in known}
        options = [NAMES[c] for c in could_be if c not in taken]
        if as_set:
            options.append(f"any {NAMES[known[0][1]][:-1]} (a set)")
        raise JokerNotFixed(names, open_places[0] + 1, options)
    for i in open_places:
        names[i] = f"PJ={NAMES[_card(suit, places[i])]}"
    return names


def fix_lay_off(
    card: Token, target: Sequence[Token], table: Iterable[Sequence[str]]
) -> tuple[str, list[str]]:
    """A laid-off card and the meld it extends, both canonical with their jokers fixed.

    The target's jokers are those of the meld on the table it is (the target may also hold
    cards laid off on it since), as they were fixed when melded; a target that names one as
    another card, or a lay-off that only fits if one changed, is refused (JokerChanged). A
    target found on no one's melds is fixed by its own names and arrangement.
    """
    fixed_target = _target_on_table(target, table)
    extended = [card, *fixed_target]
    try:
        fixed = fix_meld(extended, arranged=False)
    except MeldError as exc:
        if isinstance(exc, JokerNotFixed):
            raise
        jokers = [t for t in fixed_target if t.startswith("PJ=")]
        loose = [card, *("PJ" if t.startswith("PJ=") else t for t in fixed_target)]
        if jokers and _is_meld(loose):
            raise JokerChanged(fixed_target, jokers[0], f"{exc}") from exc
        raise
    return fixed[0], fixed_target


def _target_on_table(target: Sequence[Token], table: Iterable[Sequence[str]]) -> list[str]:
    fixed = fix_meld(target) if not _has_open_joker(target) else None
    mine = Counter(parse_joker(t)[0] for t in target)
    found: list[list[str]] = []
    for meld in table:
        theirs = Counter(parse_joker(t)[0] for t in meld)
        if theirs[PJ] == mine[PJ] > 0 and not theirs - mine:
            found.append(_with_jokers_of(target, meld))
    if not found:
        return fixed if fixed is not None else fix_meld(target)
    if fixed is not None:  # every joker named: as one of the melds it may be fixed them
        agreeing = [f for f in found if not _fixed_jokers(f) - _fixed_jokers(fixed)]
        if agreeing:
            return agreeing[0]
        melded = next((_fixed_jokers(found[0]) - _fixed_jokers(fixed)).elements())
        named = next((_fixed_jokers(fixed) - _fixed_jokers(found[0])).elements())
        raise JokerChanged(found[0], melded, f"the lay-off names it {named}")
    if any(Counter(f) != Counter(found[0]) for f in found):
        return fix_meld(target)  # two melds like it, fixed apart: its own names must say
    return found[0]


def _with_jokers_of(target: Sequence[Token], meld: Sequence[str]) -> list[str]:
    """The target with its jokers as the melded meld fixed them (in the target's order)."""
    jokers = iter(t for t in meld if t.startswith("PJ"))
    out = []
    for t in target:
        code, named = parse_joker(t)
        out.append(next(jokers) if code == PJ else _token(code, named))
    return out


def _fixed_jokers(meld: Sequence[str]) -> Counter:
    """The named jokers of a meld (a set's joker, bare ``PJ``, stands for its rank only)."""
    return Counter(t for t in meld if t.startswith("PJ="))


def _has_open_joker(meld: Sequence[Token]) -> bool:
    return any(c == PJ and n is None for c, n in map(parse_joker, meld))


def _is_meld(meld: Sequence[Token]) -> bool:
    try:
        meld_kind(meld)
    except MeldError:
        return False
    return True


def _token(code: int, named: int | None) -> str:
    return NAMES[code] if named is None else f"PJ={NAMES[named]}"


def _value_options(card: int) -> tuple[int, ...]:
    """A card's places in a run: 2..13 for 2-K, an ace 1 (low) or 14 (high)."""
    r = card % 13
    return (1, 14) if r == 0 else (r + 1,)


def _card(suit: int, value: int) -> int:
    return suit * 13 + (value - 1) % 13


def _windows(known: list[int], n: int) -> list[int]:
    """The lowest values of every run of n cards of one suit that holds the known cards."""
    if n > 13 or len({c // 13 for c in known}) != 1:
        return []
    out = []
    for lo in range(1, 16 - n):
        span = range(lo, lo + n)
        values = [next((v for v in _value_options(c) if v in span), None) for c in known]
        if None not in values and len(set(values)) == len(values):
            out.append(lo)
    return out


def _could_be_set(known: list[int], n: int) -> bool:
    suits = [c // 13 for c in known]
    return n <= 4 and len({c % 13 for c in known}) == 1 and len(set(suits)) == len(suits)


def _arranged(
    known: list[tuple[int, int]], n: int, windows: list[int]
) -> list[tuple[int, list[int]]]:
    """The runs the order of the cards as laid says, going up or down: (lowest value, the
    value at each place); one reading per run."""
    out: dict[int, list[int]] = {}
    for lo in windows:
        up = list(range(lo, lo + n))
        for places in (up, up[::-1]):
            if all(places[i] in _value_options(c) for i, c in known):
                out.setdefault(lo, places)
    return list(out.items())


def _in_order(known: list[tuple[int, int]], open_places: list[int], lo: int, n: int) -> list[int]:
    """Values by place when only one run fits but the order says nothing: the missing values
    go to the jokers in the order they are listed."""
    used = set()
    for _, c in known:
        used |= {v for v in _value_options(c) if lo <= v < lo + n}
    missing = iter(v for v in range(lo, lo + n) if v not in used)
    values = [0] * n
    for i in open_places:
        values[i] = next(missing)
    return values
