"""What a finance user's search term names, and what a transfer reference is called.

A term may be a player's external id, an account code, a transfer reference (or its prefix,
`game:12`), an idempotency key or a transfer id; other apps name more through the registries
here (the games: an external game id such as `sim-597bcd-5` names the reference `game:<pk>`),
and say what a reference is called (`game:12` is `sim-597bcd-5`). Wallets never imports them:
they register from their AppConfig.ready().

Every reading of the term is an index look-up on a small table first; the big tables (transfers,
entries) are then filtered by ids or exact references only, as one UNION of indexable selects
(an OR across joined tables would scan them whole).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from django.db.models import Q, QuerySet

from wallets.models import Account, Entry, Player, Transfer
from wallets.references import prefix_of


@dataclass(frozen=True)
class Named:
    """What a reference is called for people, and the page that shows it ("" if none)."""

    label: str
    url: str = ""


ReferenceFinder = Callable[[str], list[str]]
ReferenceNamer = Callable[[Collection[str]], dict[str, Named]]
_FINDERS: list[ReferenceFinder] = []
_NAMERS: list[ReferenceNamer] = []


def reference_finder_register(finder: ReferenceFinder) -> None:
    """`finder(term)` -> the references the term names in its app ([] if none)."""
    if finder not in _FINDERS:
        _FINDERS.append(finder)


def reference_namer_register(namer: ReferenceNamer) -> None:
    """`namer(references)` -> {reference: Named} for those it knows, in one query."""
    if namer not in _NAMERS:
        _NAMERS.append(namer)


def reference_names(references: Collection[str]) -> dict[str, Named]:
    names: dict[str, Named] = {}
    for namer in _NAMERS:
        names.update(namer(set(references)))
    return names


@dataclass(frozen=True)
class Target:
    """Everything a term may name: accounts (a player's, or one by its code) and references
    (the term itself, and what other apps resolve it to)."""

    term: str
    account_ids: tuple[int, ...]
    references: tuple[str, ...]

    def transfers_q(self) -> Q:
        """The transfers named by reference (or its prefix), idempotency key or id."""
        q = Q(reference__in=self.references) | Q(reference__startswith=prefix_of(self.term))
        q |= Q(idempotency_key=self.term)
        if self.term.isdigit():
            q |= Q(pk=int(self.term))
        return q


def search_target(term: str) -> Target:
    players = list(Player.objects.filter(external_id=term).values_list("pk", flat=True))
    accounts = list(
        Account.objects.filter(Q(player_id__in=players) | Q(code=term)).values_list("pk", flat=True)
    )
    references = {term}
    for finder in _FINDERS:
        references.update(finder(term))
    return Target(term, tuple(accounts), tuple(sorted(references)))


def transfer_ids(target: Target) -> QuerySet:
    """The ids of the transfers a term names: by reference, key or id, or touching its accounts."""
    named = Transfer.objects.filter(target.transfers_q()).values("pk")
    if not target.account_ids:
        return named
    touching = Entry.objects.filter(account_id__in=target.account_ids).values("transfer_id")
    return named.union(touching)


def entry_ids(target: Target) -> QuerySet:
    """The ids of the entries a term names: of its accounts, or of the transfers it names."""
    of_transfers = Entry.objects.filter(
        transfer_id__in=Transfer.objects.filter(target.transfers_q()).values("pk")
    ).values("pk")
    if not target.account_ids:
        return of_transfers
    return of_transfers.union(Entry.objects.filter(account_id__in=target.account_ids).values("pk"))
