"""Changing a template's terms (`MONEY_TERMS`: every field but its name and active flag):
proposed by one member of finance staff, applied when another approves it
(`wallets.services.proposals`: the same maker-checker as adjustments). Games copy their
template's terms when they open, so an approved change applies to the games opened after it
and to no game in play.
"""

from __future__ import annotations

import copy
from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import DecimalField, Field

from tournaments.models import MONEY_TERMS, GameTemplate, TemplateChange
from wallets.errors import ProposalInvalid
from wallets.services.proposals import permission_required, reason_required


def _json_value(field: Field, value: object) -> object:
    """A term as stored and compared: decimals as strings to the field's places (`2.00`)."""
    if isinstance(field, DecimalField) and value is not None:
        return f"{Decimal(value):.{field.decimal_places}f}"
    return value  # None, a string, a number of seats, a flag, the rules, the bucket order


def money_terms(obj: GameTemplate | TemplateChange) -> dict[str, object]:
    """The terms of a template, or of a proposed change, as comparable JSON values."""
    if isinstance(obj, TemplateChange):
        return obj.terms
    return {name: _json_value(_field(name), getattr(obj, name)) for name in MONEY_TERMS}


def _field(name: str) -> Field:
    return GameTemplate._meta.get_field(name)


def _with_terms(template: GameTemplate, terms: dict[str, object]) -> GameTemplate:
    """A copy of `template` carrying `terms` (JSON values or Python ones), checked field by
    field as the model checks them (a slug's form, a choice, a bound); `ProposalInvalid` names
    the field."""
    proposed = copy.copy(template)
    for name in MONEY_TERMS:
        field = _field(name)
        try:
            setattr(proposed, name, field.clean(terms[name], proposed))
        except ValidationError as exc:
            raise ProposalInvalid(
                f"{field.verbose_name}: {' '.join(exc.messages)}", details={"field": name}
            ) from exc
    return proposed


def template_change_checked(*, template: GameTemplate, terms: dict[str, object]) -> None:
    """Refuse a change no approver should see: one that changes nothing, a slug another
    template has, or terms no game could be played by (`TermsInvalid`, naming the field)."""
    proposed = _with_terms(template, terms)
    if money_terms(proposed) == money_terms(template):
        raise ProposalInvalid(f"these are the terms {template} has now: nothing changes")
    if GameTemplate.objects.filter(slug=proposed.slug).exclude(pk=template.pk).exists():
        raise ProposalInvalid(
            f"another template is called {proposed.slug!r}", details={"field": "slug"}
        )
    proposed.game_terms()


def template_change_propose(
    *, proposed_by: AbstractBaseUser, template: GameTemplate, reason: str, **terms: object
) -> TemplateChange:
    """Propose new terms for `template`; a term not given keeps its value in force."""
    permission_required(proposed_by, "tournaments.add_templatechange")
    unknown = set(terms) - set(MONEY_TERMS)
    if unknown:
        raise ProposalInvalid(f"not a term of a template: {', '.join(sorted(unknown))}")
    terms = {name: terms.get(name, getattr(template, name)) for name in MONEY_TERMS}
    template_change_checked(template=template, terms=terms)
    return TemplateChange.objects.create(
        template=template,
        terms=money_terms(_with_terms(template, terms)),
        previous=money_terms(template),
        reason=reason_required(reason, "a change of terms"),
        proposed_by=proposed_by,
    )


def template_change_apply(change: TemplateChange) -> None:
    """What approving a change does (registered with `proposal_decide`, inside its transaction):
    the template, locked, takes the new terms, unless its terms changed since the proposal."""
    template = GameTemplate.objects.select_for_update().get(pk=change.template_id)
    if money_terms(template) != change.previous:
        raise ProposalInvalid(
            f"the terms of {template} changed since {change} was proposed: "
            "reject it and propose again from the terms in force"
        )
    template_change_checked(template=template, terms=change.terms)  # still valid, slug free
    applied = _with_terms(template, change.terms)
    try:
        with transaction.atomic():  # a slug taken meanwhile (the unique constraint)
            applied.save(update_fields=list(MONEY_TERMS))
    except IntegrityError as exc:
        raise ProposalInvalid(f"another template is called {applied.slug!r}") from exc
