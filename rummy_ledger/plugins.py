"""The one plug-in point between the apps: an app that keeps a registry offers it as a named
kind, and every app hands over what it plugs in with one `register(...)` call from its
`AppConfig.ready()`, each kind by name:

    register(error_codes=[GameErrorCode], reports=[FEE_REPORT, TOURNAMENT_PNL], ...)

The kinds, and the app that offers each (`offer(kind, add)`, from its own `ready()`):

- `error_codes` (the API layer, `rummy_ledger/api/codes.py`): an app's error-code enum;
- `readings` (the project, `rummy_ledger/metrics/`): `(name, reading)`, metrics read at a scrape;
- `proposal_kinds` (the ledger, `wallets/services/proposals.py`): a `ProposalKind`, what
  approving (and rejecting) a proposal of one model does;
- `decision_receivers` (the ledger, `wallets/signals.py`): who follows a proposal's decision;
- `reconciliation_checks` (the ledger, `wallets/reconciliation/runner.py`): a `Check`;
- `reference_finders`, `reference_namers` (the ledger, `wallets/admin/search.py`): what a
  finance search term names, and what a reference is called;
- `reports` (`wallets/admin/reports.py`) and `dashboard_widgets` (`wallets/admin/dashboard.py`,
  `(section, widget)`): what finance's home page lists;
- `wind_down_steps` (`wallets/services/wind_down.py`): a `CancelStep` of the wind-down;
- `flow_finders` (`wallets/services/flows.py`): money between players, for the one-way-flow report;
- `chain_witnesses` (`wallets/chain/witnesses.py`): a `WitnessProvider`, what caused a transfer
  (a settlement's deal), covered by the transfer's link in the ledger's hash chain.

An app's `ready()` runs after those of the apps listed before it in `INSTALLED_APPS`, so an app
offers its kinds before the apps after it register into them. A kind that no app offers is
refused rather than ignored (a typo, or an app listed before the one it plugs into). Registering
the same thing again changes nothing (`ready()` may run twice in a test). Django's own hooks
(system checks, `post_migrate`) stay Django's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.core.exceptions import ImproperlyConfigured

Add = Callable[[Any], object]
_KINDS: dict[str, Add] = {}


def offer(kind: str, add: Add) -> None:
    """Offer a registry as `kind`: `add(thing)` registers one thing of that kind. Offering it
    again from the same module replaces the first (a second `ready()`); from another, refused."""
    known = _KINDS.get(kind)
    if known is not None and known.__module__ != add.__module__:
        raise ImproperlyConfigured(f"{kind!r} is offered by {known.__module__} already")
    _KINDS[kind] = add


def register(**kinds: Iterable[Any]) -> None:
    """Register each thing under its kind, in the order given (the order some registries show)."""
    unknown = sorted(set(kinds) - set(_KINDS))
    if unknown:
        raise ImproperlyConfigured(
            f"no app offers {', '.join(unknown)} (offered: {', '.join(sorted(_KINDS))}); an app "
            "registers only into apps listed before it in INSTALLED_APPS"
        )
    for kind, things in kinds.items():
        for thing in things:
            _KINDS[kind](thing)


def offered() -> tuple[str, ...]:
    return tuple(sorted(_KINDS))
