"""A new tournament proposed in admin (`NewTournament`): its fields under the names of
`manage.py create_tournament`'s file, checked as that file is (same messages), and the
tournament created only when another member of staff approves: its first money terms go
through maker-checker like every later change (`terms_changes`)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from tournaments.models import NewTournament, Tournament
from tournaments.tournaments.services.setup import (
    TournamentSpec,
    slug_taken,
    tournament_create,
    tournament_fields_checked,
)
from wallets.services.proposals import permission_required, reason_required


def new_tournament_checked(spec: dict[str, Any]) -> TournamentSpec:
    """The fields checked (`TermsInvalid` names the field at fault), the slug still free."""
    checked = tournament_fields_checked(spec)
    if Tournament.objects.filter(slug=checked.slug).exists():
        raise slug_taken(checked.slug)
    return checked


def new_tournament_propose(
    *, proposed_by: AbstractBaseUser, spec: dict[str, Any], reason: str
) -> NewTournament:
    permission_required(proposed_by, "tournaments.add_newtournament")
    checked = new_tournament_checked(spec)
    return NewTournament.objects.create(
        slug=checked.slug,
        spec=spec,
        reason=reason_required(reason, "a new tournament"),
        proposed_by=proposed_by,
    )


def new_tournament_apply(proposal: NewTournament) -> None:
    """What approving does (inside the decision's transaction): the fields checked again (the
    slug may have been taken, the registration's close may have passed), then the tournament."""
    checked = new_tournament_checked(proposal.spec)
    proposal.tournament = tournament_create(
        spec=checked, created_by=f"admin: {proposal}, proposed by {proposal.proposed_by}"
    )
    proposal.save(update_fields=["tournament"])
