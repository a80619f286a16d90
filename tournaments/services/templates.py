"""Changing a template's money terms (currency, point value, entry fee, fee %): proposed by one
member of finance staff, applied when another approves it (`wallets.services.proposals`: the
same maker-checker as adjustments). Games copy their template's terms when they open, so an
approved change applies to the games opened after it and to no game in play.
"""

from __future__ import annotations

import copy
from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser

from tournaments.models import MONEY_TERMS, GameTemplate, TemplateChange
from wallets.errors import ProposalInvalid
from wallets.services.proposals import permission_required, reason_required


def money_terms(obj: GameTemplate | TemplateChange) -> dict[str, str | None]:
    """The money terms of a template (or a proposed change), as comparable strings."""
    return {
        name: None if getattr(obj, name) is None else str(getattr(obj, name))
        for name in MONEY_TERMS
    }


def template_change_checked(*, template: GameTemplate, terms: dict[str, object]) -> None:
    """Refuse a change no approver should see: one that changes nothing, or terms no game could
    be played by (`TermsInvalid`, naming the field)."""
    proposed = copy.copy(template)
    for name in MONEY_TERMS:
        setattr(proposed, name, terms[name])
    if money_terms(proposed) == money_terms(template):
        raise ProposalInvalid(f"these are the money terms {template} has now: nothing changes")
    proposed.game_terms()


def template_change_propose(
    *,
    proposed_by: AbstractBaseUser,
    template: GameTemplate,
    currency: str,
    point_value: Decimal | None,
    entry_fee: Decimal | None,
    fee_percent: Decimal,
    reason: str,
) -> TemplateChange:
    permission_required(proposed_by, "tournaments.add_templatechange")
    terms = {
        "currency": currency,
        "point_value": point_value,
        "entry_fee": entry_fee,
        "fee_percent": fee_percent,
    }
    template_change_checked(template=template, terms=terms)
    return TemplateChange.objects.create(
        template=template,
        previous=money_terms(template),
        reason=reason_required(reason, "a change of money terms"),
        proposed_by=proposed_by,
        **terms,
    )


def template_change_apply(change: TemplateChange) -> None:
    """What approving a change does (registered with `proposal_decide`, inside its transaction):
    the template, locked, takes the new terms, unless its terms changed since the proposal."""
    template = GameTemplate.objects.select_for_update().get(pk=change.template_id)
    if money_terms(template) != change.previous:
        raise ProposalInvalid(
            f"the money terms of {template} changed since {change} was proposed: "
            "reject it and propose again from the terms in force"
        )
    for name in MONEY_TERMS:
        setattr(template, name, getattr(change, name))
    template.game_terms()  # the terms were valid when proposed; refuse if that no longer holds
    template.save(update_fields=list(MONEY_TERMS))
