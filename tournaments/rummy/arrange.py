"""Exact best arrangement: the grouping of a hand with the fewest points.

Candidate melds are enumerated once per hand (sequences as subsets of one suit's ranks with
jokers filling the gaps, sets as subsets of one rank's suits). A memoised search then always
decides the lowest remaining natural card: leave it (pay its value) or put it in a meld whose
lowest card it is. Natural cards live in a packed int (3 bits per distinct card, a guard bit
catches a borrow), jokers are a count (wild cards used as themselves are tracked separately),
and what the rules still require (a pure sequence, two sequences, a 4-card life) is a small
"need" code, so the search is exact and each state is solved once. A ``staged`` loser (S3) who
cannot keep two sequences keeps one pure sequence alone: that case needs no search, only the
pure run worth most (``_lone_pure_run``).
"""

from __future__ import annotations

from collections.abc import Iterable

from .cards import PJ, parse_cards
from .declaration import Evaluation, _evaluate, card_values
from .groups import wild_rank
from .rules import DEFAULT, PURE_ONLY, STAGED, TWO_SEQUENCES, RuleSet

INF = 1 << 30
M_SET, M_PURE3, M_PURE4, M_IMP3, M_IMP4 = range(5)


def _need_code(pure: int, seqs: int, four: int) -> int:
    return pure | seqs << 1 | four << 3


def _after(need: int, mtype: int) -> int:
    """What is still needed after adding a meld of this type."""
    if mtype == M_SET:
        return need
    pure, seqs, four = need & 1, need >> 1 & 3, need >> 3 & 1
    if mtype in (M_PURE3, M_PURE4):
        pure = 0
    if mtype in (M_PURE4, M_IMP4):
        four = 0
    return _need_code(pure, max(seqs - 1, 0), four)


_TRANS = [[_after(n, m) for m in range(5)] for n in range(16)]
# Per meld type, what is still needed after it, indexed by what was needed.
_AFTER = tuple(tuple(_after(n, m) for n in range(16)) for m in range(5))


class _Hand:
    """Per-hand tables: card types, packed counts and the candidate melds."""

    def __init__(self, codes: list[int], w: int, rules: RuleSet) -> None:
        self.rules = rules
        self.w = w
        values = card_values(w, rules.ace_points)
        naturals = [c for c in codes if c != PJ and c % 13 + 1 != w]
        self.wilds = [c for c in codes if c != PJ and c % 13 + 1 == w]
        self.pjs = codes.count(PJ)
        self.k0 = len(codes) - len(naturals)
        self.counts: dict[int, int] = {}
        for c in naturals:
            self.counts[c] = self.counts.get(c, 0) + 1
        self.types = sorted(self.counts)
        self.wtypes = wtypes = sorted(set(self.wilds))
        self.windex = {c: i for i, c in enumerate(wtypes)}
        # Three of one wild card as themselves are a pure sequence of jokers alone, which the
        # search (each meld anchored on a natural card) never forms: each is tried as a start.
        self.triples = [-1]
        if rules.identical_triple_is_pure:
            self.triples += [c for c in wtypes if self.wilds.count(c) >= 3]
        self.raw: list[tuple] = []
        self._enumerate(w)
        # Cards in no candidate meld are always left over: keep them out of the search.
        live = {c for nat, *_ in self.raw for c in nat}
        self.dead = [c for c in naturals if c not in live]
        self.dead_cost = sum(values[c] for c in self.dead)
        naturals = [c for c in naturals if c in live]
        self.types = types = sorted(set(naturals))
        self.index = {c: i for i, c in enumerate(types)}
        # Field width per card type: its count plus a guard bit that catches a borrow.
        most = max(
            [naturals.count(c) for c in types] + [self.wilds.count(c) for c in wtypes], default=1
        )
        self.width = bw = max(3, (most or 1).bit_length() + 1)
        self.vals = [values[c] for c in types]
        self.nat0 = sum(1 << bw * self.index[c] for c in naturals)
        top = 1 << (bw - 1)
        self.guard = sum(top << bw * i for i in range(len(types)))
        self.wild0 = sum(1 << bw * self.windex[c] for c in self.wilds)
        self.wguard = sum(top << bw * i for i in range(len(wtypes)))
        self.kshift = bw * max(len(types), 1)
        self.wshift = self.kshift + 5 + len(codes).bit_length()
        self.nshift = self.wshift + bw * max(len(wtypes), 1)
        self.melds: list[list[tuple]] = [[] for _ in types]
        # What the search reads of each meld: (natural counts, wild counts, jokers, need after).
        self.moves: list[list[tuple]] = [[] for _ in types]
        for nat, wild, generic, mtype in self.raw:
            self._encode(nat, wild, generic, mtype)
        self.units = [1 << bw * i for i in range(len(types))]

    def _add(self, nat: list[int], wild: int, generic: int, mtype: int) -> None:
        self.raw.append((tuple(nat), wild, generic, mtype))

    def _encode(self, nat: tuple[int, ...], wild: int, generic: int, mtype: int) -> None:
        need = 0
        for c in nat:
            need += 1 << self.width * self.index[c]
        wneed = 1 << self.width * self.windex[wild] if wild >= 0 else 0
        used = generic + (wild >= 0)
        first = self.index[min(nat)]  # types are sorted, so the lowest code has the lowest index
        self.melds[first].append((need, wneed, used, mtype, nat, wild, generic))
        self.moves[first].append((need, wneed, used, _AFTER[mtype]))

    def _enumerate(self, w: int) -> None:
        rules = self.rules
        k0 = self.k0
        maxlen = min(13, rules.max_sequence_length or 13)
        limit = rules.max_jokers_per_sequence
        jmax = k0 if limit is None else min(k0, limit)
        limits = (maxlen, jmax, rules.four_card_life)
        seen: set[tuple] = set()
        by_suit: list[list[tuple[int, int, int]]] = [[], [], [], []]
        for c in self.types:
            r = c % 13 + 1
            by_suit[c // 13].append((r, c, -1))
            if r == 1:
                by_suit[c // 13].append((14, c, -1))
        for s, slots in enumerate(by_suit):  # (position, natural code or -1, wild code or -1)
            wc = s * 13 + w - 1 if w else -1
            if wc in self.windex:
                slots.append((w, -1, wc))
                if w == 1:
                    slots.append((14, -1, wc))
            # Ace low (ranks 1..13), then ace high (2..14): without an ace at 14 the second
            # window only repeats runs of the first.
            windows = ((1, 13), (2, 14)) if any(x[0] == 14 for x in slots) else ((1, 13),)
            for lo_ok, hi_ok in windows:
                sl = sorted(x for x in slots if lo_ok <= x[0] <= hi_ok)
                for a, (pos, c, wcode) in enumerate(sl):
                    self._runs(sl, a + 1, pos, pos, [c] if c >= 0 else [], wcode, limits, seen)
        if rules.identical_triple_is_pure:
            for c in self.types:
                if self.counts[c] >= 3:
                    self._add([c, c, c], -1, 0, M_PURE3)
        by_rank: dict[int, list[int]] = {}
        for c in self.types:
            by_rank.setdefault(c % 13, []).append(c)
        single_as_seq = (limit is None or limit >= 2) and maxlen >= 3
        for cs in by_rank.values():
            n = len(cs)
            if n == 1 and (single_as_seq or k0 < 2):
                continue  # a lone card makes no set here
            for bits in range(1, 1 << n):
                sub = [cs[i] for i in range(n) if bits >> i & 1]
                size = len(sub)
                generic = max(0, 3 - size)
                if generic > k0 or size > 4 or (size == 1 and single_as_seq):
                    continue
                self._add(sub, -1, generic, M_SET)

    def _runs(self, sl, b, first, last, nat, wild, limits, seen) -> None:
        """Add the run from ``first`` to ``last`` (jokers fill its gaps), then extend it by each
        later slot in turn; ``nat`` holds its natural cards, ``wild`` its own-place wild card."""
        maxlen, jmax, four = limits
        size = len(nat) + (wild >= 0)
        if nat:
            span = last - first + 1
            length = span if span > 3 else 3
            for ln in (length, 4) if four and length < 4 else (length,):
                generic = ln - size
                if ln <= maxlen and generic <= jmax and generic + (wild >= 0) <= self.k0:
                    key = (tuple(sorted(nat)), wild, ln)
                    if key not in seen:
                        seen.add(key)
                        if generic:
                            mt = M_IMP4 if ln >= 4 else M_IMP3
                        else:
                            mt = M_PURE4 if ln >= 4 else M_PURE3
                        self._add(nat, wild, generic, mt)
        for j in range(b, len(sl)):
            pos, c, wc = sl[j]
            if pos == last or (wc >= 0 and wild >= 0):
                continue
            nspan = pos - first + 1
            if nspan > maxlen or (nspan >= 3 and nspan - (size + 1) > jmax):
                break
            if c < 0:
                self._runs(sl, j + 1, first, pos, nat, wc, limits, seen)
            elif c not in nat:
                nat.append(c)
                self._runs(sl, j + 1, first, pos, nat, wild, limits, seen)
                nat.pop()


def _search(h: _Hand):
    """Memoised minimum leftover value for (cards left, jokers left, wilds left, need), and
    whether every card left can be melded; each with the meld it chose per state."""
    melds = _melds_of(h)
    f, choice = _least_left(h, melds)
    z, zchoice = _all_melded(h, melds)
    return f, choice, z, zchoice


def _melds_of(h: _Hand):
    moves, guard, wguard = h.moves, h.guard, h.wguard

    def melds(i: int, nat: int, k: int, wild: int):
        """The melds of card slot i that the cards, jokers and wilds left can still make: each
        as (index, cards left, jokers left, wilds left, need transition row). Subtracting the
        meld's vector from the counts with a guard bit per field shows a shortfall as a borrow."""
        for j, (nvec, wvec, used, after) in enumerate(moves[i]):
            if used > k:
                continue
            x = (nat | guard) - nvec
            if x & guard != guard:
                continue
            wild2 = wild
            if wvec:
                y = (wild | wguard) - wvec
                if y & wguard != wguard:
                    continue
                wild2 = y ^ wguard
            yield j, x ^ guard, k - used, wild2, after

    return melds


def _least_left(h: _Hand, melds):
    """The search for the least value left over, and its choices (-1: leave the card)."""
    memo: dict[int, int] = {}
    choice: dict[int, int] = {}
    memo_get = memo.get
    vals, units = h.vals, h.units
    bw, ks, ws, ns = h.width, h.kshift, h.wshift, h.nshift

    def f(nat: int, k: int, wild: int, need: int) -> int:
        if nat == 0:
            return 0 if need == 0 else INF
        key = nat | k << ks | wild << ws | need << ns
        got = memo_get(key)
        if got is not None:
            return got
        i = ((nat & -nat).bit_length() - 1) // bw
        best = vals[i] + f(nat - units[i], k, wild, need)
        pick = -1
        if best:
            for j, rest, k2, wild2, after in melds(i, nat, k, wild):
                cost = f(rest, k2, wild2, after[need])
                if cost < best:
                    best = cost
                    pick = j
                    if cost == 0:
                        break
        memo[key] = best
        choice[key] = pick
        return best

    return f, choice


def _all_melded(h: _Hand, melds):
    """The search for a hand melded whole, and its choices."""
    zmemo: dict[int, bool] = {}
    zchoice: dict[int, int] = {}
    zmemo_get = zmemo.get
    bw, ks, ws, ns = h.width, h.kshift, h.wshift, h.nshift

    def z(nat: int, k: int, wild: int, need: int) -> bool:
        """Can every card left be melded (nothing left over) meeting ``need``? No leave branch."""
        if nat == 0:
            return need == 0
        key = nat | k << ks | wild << ws | need << ns
        got = zmemo_get(key)
        if got is not None:
            return got
        i = ((nat & -nat).bit_length() - 1) // bw
        ok = False
        for j, rest, k2, wild2, after in melds(i, nat, k, wild):
            if z(rest, k2, wild2, after[need]):
                zchoice[key] = j
                ok = True
                break
        zmemo[key] = ok
        return ok

    return z, zchoice


def _start(h: _Hand, need: int, triple: int) -> tuple[int, int, int, int]:
    """The search's first state: the whole hand, less a wild triple set aside (-1: none)."""
    if triple < 0:
        return h.nat0, h.k0, h.wild0, need
    wild = h.wild0 - 3 * (1 << h.width * h.windex[triple])
    return h.nat0, h.k0 - 3, wild, _TRANS[need][M_PURE3]


def _render(h: _Hand, choice: dict[int, int], need: int, triple: int) -> list[list[int]]:
    nat, k, wild, need = _start(h, need, triple)
    groups: list[list[int]] = [[triple] * 3] if triple >= 0 else []
    loose: list[int] = list(h.dead)
    wanted: list[tuple[list[int], int]] = []
    reserved: list[int] = groups[0][:] if groups else []
    while nat:
        key = nat | k << h.kshift | wild << h.wshift | need << h.nshift
        i = ((nat & -nat).bit_length() - 1) // h.width
        j = choice[key]
        if j < 0:
            loose.append(h.types[i])
            nat -= 1 << h.width * i
            continue
        nvec, wvec, used, mtype, cards, wc, generic = h.melds[i][j]
        nat -= nvec
        k -= used
        wild -= wvec
        need = _TRANS[need][mtype]
        group = sorted(cards)
        if wc >= 0:
            group.append(wc)
            reserved.append(wc)
        groups.append(group)
        wanted.append((group, generic))
    pool = list(h.wilds)
    for wc in reserved:
        pool.remove(wc)
    pool += [PJ] * h.pjs
    for group, generic in wanted:
        for _ in range(generic):
            group.append(pool.pop())
    if loose:
        groups.append(sorted(loose))
    if pool:
        groups.append(pool)
    return groups


def _needs(rules: RuleSet) -> tuple[int, int]:
    four = 1 if rules.four_card_life else 0
    declare = _need_code(1, 2, four)
    if rules.loser_gate == PURE_ONLY:
        return declare, _need_code(1, 1, 0)
    return declare, declare if rules.loser_gate == TWO_SEQUENCES else _need_code(1, 2, 0)


def _lone_pure_run(h: _Hand, codes: list[int]) -> tuple[int, list[list[int]]] | None:
    """``staged`` without a second sequence: only one pure sequence is kept and every other card
    counts, so the best such grouping keeps the pure sequence worth most. Its leftover value and
    groups, or None when the hand holds no pure sequence."""
    values = card_values(h.w, h.rules.ace_points)
    best = (0, [h.triples[1]] * 3) if len(h.triples) > 1 else None  # wild triple: worth 0
    for nat, wild, _generic, mtype in h.raw:
        if mtype in (M_PURE3, M_PURE4):
            worth = sum(values[c] for c in nat)
            if best is None or worth > best[0]:
                best = (worth, [*nat, wild] if wild >= 0 else list(nat))
    if best is None:
        return None
    worth, run = best
    rest = list(codes)
    for c in run:
        rest.remove(c)
    return sum(values[c] for c in codes) - worth, [run, sorted(rest)] if rest else [run]


def best_arrangement(
    cards: Iterable[str | int] | str, wild_joker: str | int | None, rules: RuleSet = DEFAULT
) -> Evaluation:
    """The grouping of these cards with the fewest points (a valid show when one exists)."""
    codes = parse_cards(cards)
    w = wild_rank(wild_joker, rules)
    h = _Hand(codes, w, rules)
    f, choice, z, zchoice = _search(h)
    declare, gate = _needs(rules)
    if not h.dead:
        for t in h.triples:
            if z(*_start(h, declare, t)):
                return _evaluate([tuple(g) for g in _render(h, zchoice, declare, t)], w, rules)
    kept, triple = min((f(*_start(h, gate, t)), t) for t in h.triples)
    if rules.loser_gate == STAGED:
        lone = _lone_pure_run(h, codes)
        if lone is not None and lone[0] < kept + h.dead_cost:
            return _evaluate([tuple(g) for g in lone[1]], w, rules)
    need = gate
    if kept >= INF:  # no grouping meets the gate: the full count, however the cards lie
        need, triple = 0, -1
        f(*_start(h, need, triple))
    return _evaluate([tuple(g) for g in _render(h, choice, need, triple)], w, rules)


def can_declare(
    cards: Iterable[str | int] | str, wild_joker: str | int | None, rules: RuleSet = DEFAULT
) -> bool:
    """Could all these cards be grouped as a show (sequence rules met, nothing left over)?

    Unlike ``best_arrangement(...).valid`` it does not insist on 13 cards, so small hands can be
    checked against brute force.
    """
    codes = parse_cards(cards)
    h = _Hand(codes, wild_rank(wild_joker, rules), rules)
    z = _search(h)[2]
    declare = _needs(rules)[0]
    return not h.dead and any(z(*_start(h, declare, t)) for t in h.triples)
