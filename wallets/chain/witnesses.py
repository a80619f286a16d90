"""What caused a transfer, as another app stores it, covered by the transfer's link: a provider
an app registers (the kind `chain_witnesses`, rummy_ledger/plugins.py) answers, for the
transfers of one batch, the content of what caused each (the games: a settlement's deal, its
hands and points) and what to call it when it no longer matches. The ledger imports no app.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass


@dataclass(frozen=True)
class Witness:
    """`name` says what it is to a person (`deal 12 (game sim-5, deal 3)`); `content` is hashed
    with the transfer (canonical.py's types)."""

    name: str
    content: dict


@dataclass(frozen=True)
class WitnessProvider:
    """`kind` is the key of its content in a transfer's (`deal`); `witnesses(transfer_ids)` ->
    {transfer id: Witness} for the transfers it knows of, one query for the batch."""

    kind: str
    witnesses: Callable[[Collection[int]], dict[int, Witness]]


_PROVIDERS: dict[str, WitnessProvider] = {}


def witness_provider_register(provider: WitnessProvider) -> None:
    """Register (again: replaced) the provider of one kind."""
    _PROVIDERS[provider.kind] = provider


def witnesses_of(transfer_ids: Collection[int]) -> dict[int, dict[str, Witness]]:
    """Every registered provider's witnesses of these transfers: {transfer id: {kind: Witness}}."""
    found: dict[int, dict[str, Witness]] = {}
    for kind, provider in sorted(_PROVIDERS.items()):
        for transfer_id, witness in provider.witnesses(transfer_ids).items():
            found.setdefault(transfer_id, {})[kind] = witness
    return found
