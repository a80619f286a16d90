"""Scheduling a tournament: its terms checked once (`terms.TournamentTerms`), its prize rows,
escrow shards and seats created with it.

`tournament_fields_checked` takes the fields under docs/tournaments.md's names (the JSON file of
`manage.py create_tournament`, the admin form's cleaned data) and refuses what either would
refuse, with the same messages (`TermsInvalid` naming the field). Money terms scheduled here
are the operator's or a superuser's; finance changes them only through a proposal (maker-checker).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from rummy_ledger.api.models import ApiClient
from tournaments.errors import TermsInvalid
from tournaments.games.services.escrow import escrow_create
from tournaments.models import (
    Tournament,
    TournamentEscrow,
    TournamentPrize,
    TournamentSeat,
)
from tournaments.payouts import TICKET, PrizeRow, seats_of
from tournaments.tournaments.terms import (
    TournamentTerms,
    decimal_of,
    prizes_of,
    rebuy_of,
    rounds_of,
)
from wallets.money.amounts import amount_text

# Registrations pay into one of this many escrow accounts (by seat number), so they do not all
# lock one account row; the payout and the refunds empty every one.
ESCROW_SHARDS = 16
FIELDS = (
    "slug", "name", "client", "currency", "entry_fee", "fee_percent", "guarantee",
    "min_players", "max_players", "table_size", "registration_closes_at", "bonus_cap_percent",
    "rounds", "rebuy", "prizes", "tickets_unused",
)  # fmt: skip
REQUIRED = set(FIELDS) - {"bonus_cap_percent", "rebuy", "guarantee", "tickets_unused"}
TICKETS_UNUSED = ("refund", "lapse")
SLUG = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


@dataclass(frozen=True)
class TournamentSpec:
    slug: str
    name: str
    client: ApiClient
    registration_closes_at: datetime
    terms: TournamentTerms
    tickets_unused: str = "refund"


def terms_of(tournament: Tournament) -> TournamentTerms:
    return TournamentTerms(
        currency=tournament.currency,
        entry_fee=tournament.entry_fee,
        fee_percent=tournament.fee_percent,
        guarantee=tournament.guarantee,
        min_players=tournament.min_players,
        max_players=tournament.max_players,
        table_size=tournament.table_size,
        bonus_cap_percent=tournament.bonus_cap_percent,
        rounds=rounds_of(tournament.rounds),
        rebuy=rebuy_of(tournament.rebuy),
        prizes=tuple(
            PrizeRow(p.rank_from, p.rank_to, p.percent, p.kind, p.target and p.target.slug)
            for p in tournament.prizes.select_related("target")
        ),
    )


def named_fields_checked(
    data: Any, *, noun: str, fields: tuple[str, ...], required: set[str]
) -> tuple[str, str, ApiClient]:
    """What every object made from a file or a proposal shares (a tournament, a leaderboard):
    a JSON object of known fields with the required ones present; its slug, its name and the
    active API client (scope games) it belongs to. `TermsInvalid` names the first field at fault."""
    if not isinstance(data, dict):
        raise TermsInvalid("file", f"{noun} is a JSON object")
    if unknown := set(data) - set(fields):
        raise TermsInvalid("file", f"unknown fields: {', '.join(sorted(unknown))}")
    if missing := required - set(data):
        raise TermsInvalid("file", f"missing fields: {', '.join(sorted(missing))}")
    slug, name = data["slug"], data["name"]
    if not isinstance(slug, str) or not SLUG.fullmatch(slug):
        raise TermsInvalid("slug", "1 to 64 of a-z, 0-9, - and _, starting with a letter or digit")
    if not isinstance(name, str) or not 1 <= len(name.strip()) <= 120:
        raise TermsInvalid("name", "1 to 120 characters")
    client = ApiClient.objects.filter(name=data["client"], is_active=True).first()
    if client is None or "games" not in client.scopes:
        raise TermsInvalid("client", f"no active API client {data['client']!r} with scope games")
    return slug, name, client


def tournament_fields_checked(data: Any, *, now: datetime | None = None) -> TournamentSpec:
    """The fields of a new tournament, checked: `TermsInvalid` names the first field at fault."""
    slug, name, client = named_fields_checked(
        data, noun="a tournament", fields=FIELDS, required=REQUIRED
    )
    closes = data["registration_closes_at"]
    closes_at = parse_datetime(closes) if isinstance(closes, str) else closes
    if not isinstance(closes_at, datetime) or timezone.is_naive(closes_at):
        raise TermsInvalid("registration_closes_at", "an ISO 8601 time with its UTC offset")
    if closes_at <= (now or timezone.now()):
        raise TermsInvalid("registration_closes_at", "must be in the future")
    terms = TournamentTerms(
        currency=data["currency"] if isinstance(data["currency"], str) else "",
        entry_fee=decimal_of("entry_fee", data["entry_fee"]),
        fee_percent=decimal_of("fee_percent", data["fee_percent"]),
        guarantee=decimal_of("guarantee", data.get("guarantee", "0.00")),
        min_players=data["min_players"],
        max_players=data["max_players"],
        table_size=data["table_size"],
        bonus_cap_percent=decimal_of("bonus_cap_percent", data.get("bonus_cap_percent", "10.00")),
        rounds=rounds_of(data["rounds"]),
        rebuy=rebuy_of(data.get("rebuy")),
        prizes=prizes_of(data["prizes"]),
    )
    if terms.target is not None:
        satellite_target_checked(client=client, terms=terms)
    tickets_unused = data.get("tickets_unused", "refund")
    if tickets_unused not in TICKETS_UNUSED:
        raise TermsInvalid("tickets_unused", '"refund" (the default) or "lapse"')
    return TournamentSpec(slug, name.strip(), client, closes_at, terms, tickets_unused)


def satellite_target_checked(*, client: ApiClient, terms: TournamentTerms) -> Tournament:
    """A satellite's target: this client's, in its currency, registering, and the guarantee
    covers the seats at its entry fee (so seats are always funded)."""
    target = Tournament.objects.filter(client=client, slug=terms.target).first()
    if target is None:
        raise TermsInvalid("prizes", f"no tournament {terms.target!r} of this client")
    if target.currency != terms.currency or target.status != Tournament.Status.REGISTERING:
        raise TermsInvalid("prizes", f"{target.slug!r} must be registering and in {terms.currency}")
    if target.entry_fee <= 0:
        raise TermsInvalid("prizes", f"{target.slug!r} is a freeroll: a seat in it is worth 0")
    seats_value = seats_of(terms.prizes) * target.entry_fee
    if terms.guarantee < seats_value:
        raise TermsInvalid(
            "guarantee",
            f"the guarantee must cover the seats: at least {amount_text(seats_value)}",
        )
    return target


def slug_taken(slug: str) -> TermsInvalid:
    return TermsInvalid("slug", f"a tournament {slug!r} exists already")


@transaction.atomic
def tournament_create(*, spec: TournamentSpec, created_by: str) -> Tournament:
    """Create the tournament with its prize rows, escrow shards and `max_players` seats."""
    terms = spec.terms
    try:
        with transaction.atomic():
            tournament = Tournament.objects.create(
                client=spec.client,
                slug=spec.slug,
                name=spec.name,
                currency=terms.currency,
                entry_fee=terms.entry_fee,
                fee_percent=terms.fee_percent,
                guarantee=terms.guarantee,
                min_players=terms.min_players,
                max_players=terms.max_players,
                table_size=terms.table_size,
                registration_closes_at=spec.registration_closes_at,
                bonus_cap_percent=terms.bonus_cap_percent,
                rounds=terms.rounds_json(),
                rebuy=terms.rebuy_json(),
                tickets_unused=spec.tickets_unused,
                created_by=created_by,
                tickets_account=escrow_create(
                    owner=spec.client.pk,
                    name=f"tournament:{spec.slug}:tickets",
                    currency=terms.currency,
                ),
            )
    except IntegrityError as exc:
        raise slug_taken(spec.slug) from exc
    target = terms.target and satellite_target_checked(client=spec.client, terms=terms)
    TournamentPrize.objects.bulk_create(
        TournamentPrize(
            tournament=tournament,
            rank_from=row.rank_from,
            rank_to=row.rank_to,
            percent=row.percent,
            kind=row.kind,
            target=target if row.kind == TICKET else None,
        )
        for row in terms.prizes
    )
    TournamentEscrow.objects.bulk_create(
        TournamentEscrow(
            tournament=tournament,
            shard=shard,
            # under the client's escrow codes, so its hourly escrow cap counts these entries
            account=escrow_create(
                owner=spec.client.pk,
                name=f"tournament:{spec.slug}:{shard}",
                currency=terms.currency,
            ),
        )
        for shard in range(ESCROW_SHARDS)
    )
    TournamentSeat.objects.bulk_create(
        (TournamentSeat(tournament=tournament, number=n) for n in range(terms.max_players)),
        batch_size=5000,
    )
    return tournament
