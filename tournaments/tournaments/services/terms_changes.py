"""Changing a tournament's money terms (entry fee, fee %, guarantee, rebuy, prize table):
proposed by one member of finance staff, applied when another approves it (the maker-checker of
`wallets.services.proposals`, as template money terms are), and only while nobody has
registered: once anyone has, nothing but the name changes. The terms are checked by the same
`TournamentTerms` as `create_tournament` (same messages)."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q

from tournaments.errors import TermsInvalid
from tournaments.models import Tournament, TournamentChange, TournamentPrize
from tournaments.payouts import TICKET
from tournaments.tournaments.services.setup import satellite_target_checked, terms_of
from tournaments.tournaments.terms import (
    TournamentTerms,
    decimal_of,
    prizes_json,
    prizes_of,
    rebuy_of,
)
from wallets.errors import ProposalInvalid
from wallets.money.amounts import amount_text
from wallets.services.proposals import permission_required, reason_required


def money_terms(tournament: Tournament) -> dict[str, Any]:
    """The money terms in force, as comparable JSON."""
    return _as_json(terms_of(tournament))


def _proposed_terms(tournament: Tournament, change: dict[str, Any]) -> TournamentTerms:
    """The tournament's terms with these money terms (amounts as Decimals or as the decimal
    strings of create_tournament's file), checked as create_tournament checks them. A seat's
    value is fixed: the entry fee does not change once tickets for the tournament exist or
    while a satellite not over pays seats in it."""
    try:
        terms = dataclasses.replace(
            terms_of(tournament),
            entry_fee=decimal_of("entry_fee", change["entry_fee"]),
            fee_percent=decimal_of("fee_percent", change["fee_percent"]),
            guarantee=decimal_of("guarantee", change["guarantee"]),
            rebuy=rebuy_of(change["rebuy"]),
            prizes=prizes_of(change["prizes"]),
        )
        if terms.target is not None:
            satellite_target_checked(client=tournament.client, terms=terms)
    except TermsInvalid as exc:
        raise ProposalInvalid(exc.message, details={"field": exc.field}) from exc
    if terms.entry_fee != tournament.entry_fee and seats_in(tournament).exists():
        raise ProposalInvalid(
            f"tickets for {tournament} exist or a satellite pays seats in it: "
            "its entry fee no longer changes",
            details={"field": "entry_fee"},
        )
    return terms


def seats_in(tournament: Tournament):
    """Tickets for the tournament, or satellites not over paying seats in it."""
    open_ = (Tournament.Status.REGISTERING, Tournament.Status.RUNNING)
    return Tournament.objects.filter(
        Q(pk=tournament.pk, tickets__isnull=False) | Q(prizes__target=tournament, status__in=open_)
    )


def _nobody_registered(tournament: Tournament) -> None:
    if tournament.status != Tournament.Status.REGISTERING or tournament.registrations.exists():
        raise ProposalInvalid(
            f"players have registered for {tournament}: its money terms no longer change"
        )


def tournament_change_checked(
    *,
    tournament: Tournament,
    entry_fee: Decimal | str,
    fee_percent: Decimal | str,
    guarantee: Decimal | str,
    rebuy: dict | None,
    prizes: list[dict],
) -> TournamentTerms:
    """The terms a change would give, or `ProposalInvalid` (`details["field"]`: the field at
    fault): what proposing refuses, run by the admin's form before anything is written."""
    _nobody_registered(tournament)
    change = {
        "entry_fee": entry_fee,
        "fee_percent": fee_percent,
        "guarantee": guarantee,
        "rebuy": rebuy,
        "prizes": prizes,
    }
    terms = _proposed_terms(tournament, change)
    if _as_json(terms) == money_terms(tournament):
        raise ProposalInvalid(f"these are the money terms {tournament} has now: nothing changes")
    return terms


def tournament_change_propose(
    *,
    proposed_by: AbstractBaseUser,
    tournament: Tournament,
    entry_fee: Decimal | str,
    fee_percent: Decimal | str,
    guarantee: Decimal | str,
    rebuy: dict | None,
    prizes: list[dict],
    reason: str,
) -> TournamentChange:
    permission_required(proposed_by, "tournaments.add_tournamentchange")
    terms = tournament_change_checked(
        tournament=tournament,
        entry_fee=entry_fee,
        fee_percent=fee_percent,
        guarantee=guarantee,
        rebuy=rebuy,
        prizes=prizes,
    )
    previous = money_terms(tournament)
    return TournamentChange.objects.create(
        tournament=tournament,
        previous=previous,
        reason=reason_required(reason, "a change of money terms"),
        proposed_by=proposed_by,
        entry_fee=terms.entry_fee,
        fee_percent=terms.fee_percent,
        guarantee=terms.guarantee,
        rebuy=terms.rebuy_json(),
        prizes=prizes_json(terms.prizes),
    )


def _as_json(terms: TournamentTerms) -> dict[str, Any]:
    return {
        "entry_fee": amount_text(terms.entry_fee),
        "fee_percent": amount_text(terms.fee_percent),
        "guarantee": amount_text(terms.guarantee),
        "rebuy": terms.rebuy_json(),
        "prizes": prizes_json(terms.prizes),
    }


def change_terms(change: TournamentChange) -> dict[str, Any]:
    """The money terms a change proposes, as comparable JSON (the shape of `money_terms`)."""
    return {
        "entry_fee": amount_text(change.entry_fee),
        "fee_percent": amount_text(change.fee_percent),
        "guarantee": amount_text(change.guarantee),
        "rebuy": change.rebuy,
        "prizes": change.prizes,
    }


def tournament_change_apply(change: TournamentChange) -> None:
    """What approving does (inside the decision's transaction): the tournament, locked, takes
    the terms, unless someone registered or its terms changed since the proposal."""
    tournament = Tournament.objects.select_for_update().get(pk=change.tournament_id)
    _nobody_registered(tournament)
    if money_terms(tournament) != change.previous:
        raise ProposalInvalid(
            f"the money terms of {tournament} changed since {change} was proposed: "
            "reject it and propose again from the terms in force"
        )
    terms = _proposed_terms(tournament, change_terms(change))
    tournament.entry_fee = terms.entry_fee
    tournament.fee_percent = terms.fee_percent
    tournament.guarantee = terms.guarantee
    tournament.rebuy = terms.rebuy_json()
    tournament.save(update_fields=["entry_fee", "fee_percent", "guarantee", "rebuy"])
    tournament.prizes.all().delete()
    target = terms.target and Tournament.objects.get(client=tournament.client, slug=terms.target)
    TournamentPrize.objects.bulk_create(
        TournamentPrize(
            tournament=tournament,
            rank_from=r.rank_from,
            rank_to=r.rank_to,
            percent=r.percent,
            kind=r.kind,
            target=target if r.kind == TICKET else None,
        )
        for r in terms.prizes
    )
