"""The one plug-in point (rummy_ledger/plugins.py): every kind the apps register into is offered
by the app that keeps it, a kind nobody offers is refused, and a second `ready()` registers
nothing twice."""

import pytest
from django.apps import apps
from django.core.exceptions import ImproperlyConfigured

from rummy_ledger import plugins
from rummy_ledger.api.codes import catalogue
from rummy_ledger.events import renderers
from rummy_ledger.metrics import _READINGS
from wallets.admin import reports, search
from wallets.chain import witnesses
from wallets.reconciliation.runner import CHECKS
from wallets.services import flows, wind_down
from wallets.services.proposals import proposal_kinds
from wallets.signals import proposal_decided

KINDS = {
    "error_codes",
    "readings",
    "proposal_kinds",
    "decision_receivers",
    "reconciliation_checks",
    "reference_finders",
    "reference_namers",
    "reports",
    "dashboard_widgets",
    "wind_down_steps",
    "flow_finders",
    "event_renderers",
    "chain_witnesses",
}


def registered() -> dict:
    return {
        "error_codes": catalogue(),
        "readings": list(_READINGS),
        "proposal_kinds": proposal_kinds(),
        "decision_receivers": len(proposal_decided.receivers),
        "reconciliation_checks": [check.name for check in CHECKS],
        "reference_finders": list(search._FINDERS),
        "reference_namers": list(search._NAMERS),
        "reports": list(reports._REPORTS),
        "wind_down_steps": list(wind_down._STEPS),
        "flow_finders": list(flows._FINDERS),
        "event_renderers": dict(renderers._RENDERERS),
        "chain_witnesses": dict(witnesses._PROVIDERS),
    }


def test_every_kind_is_offered():
    assert set(plugins.offered()) == KINDS


def test_a_kind_nobody_offers_is_refused():
    with pytest.raises(ImproperlyConfigured, match="no app offers reprts"):
        plugins.register(reprts=[object()])


def test_a_second_ready_registers_nothing_twice():
    before = registered()
    for label in ("rummy_ledger", "api", "wallets", "tournaments"):
        apps.get_app_config(label).ready()
    assert registered() == before
    assert before["readings"] == ["celery", "withdrawals", "reconciliation", "deals"]
    assert before["wind_down_steps"] == ["cash games", "cash tournaments"]
    assert list(before["chain_witnesses"]) == ["deal"]
