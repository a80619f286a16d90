"""Creating a leaderboard: its fields checked once, under the names of
`manage.py create_leaderboard`'s file (the admin's proposal holds the same JSON), refused with
the same messages (`TermsInvalid` naming the field). What counts: game templates, tournaments
of the client (not over), or both, in the leaderboard's currency. The prize table is a tournament's
(`tournaments.tournaments.terms.prizes_of`, `prize_ranks_checked`) with an `amount` per rank in
place of a percent; a ticket row's target is the client's, in the currency and registering, as
a satellite's. A new leaderboard spends promotions: finance proposes it and another member of
staff approves (`NewLeaderboard`), or an operator with shell access runs the command.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from rummy_ledger.api.models import ApiClient
from tournaments.errors import TermsInvalid
from tournaments.leaderboards import rules
from tournaments.models import GameTemplate, Leaderboard, NewLeaderboard, Tournament
from tournaments.payouts import TICKET, PrizeRow
from tournaments.tournaments.services.setup import named_fields_checked
from tournaments.tournaments.terms import (
    CASH,
    CHIPS,
    decimal_of,
    prize_ranks_checked,
    prizes_json,
    prizes_of,
)
from wallets.money.amounts import amount_text
from wallets.months import INDIA
from wallets.services.proposals import permission_required, reason_required

FIELDS = (
    "slug", "name", "client", "currency", "starts_at", "ends_at", "templates", "tournaments",
    "scoring", "scoring_parameters", "prizes",
)  # fmt: skip
REQUIRED = set(FIELDS) - {"scoring_parameters", "templates", "tournaments"}
MAX_DAYS = 92  # a quarter at most
MAX_TEMPLATES = 100
MAX_TOURNAMENTS = 100
MAX_PARAMETER = Decimal("1000000")


@dataclass(frozen=True)
class LeaderboardSpec:
    slug: str
    name: str
    client: ApiClient
    currency: str
    starts_at: datetime
    ends_at: datetime
    templates: tuple[str, ...]
    tournaments: tuple[str, ...]
    scoring: str
    parameters: dict[str, Decimal]
    prizes: tuple[PrizeRow, ...]


def _ist_midnight(field: str, value: Any) -> datetime:
    moment = parse_datetime(value) if isinstance(value, str) else None
    if moment is None or timezone.is_naive(moment):
        raise TermsInvalid(field, "an ISO 8601 time with its UTC offset")
    ist = moment.astimezone(INDIA)
    if (ist.hour, ist.minute, ist.second, ist.microsecond) != (0, 0, 0, 0):
        raise TermsInvalid(field, "an IST day's start: 00:00 in India (18:30 UTC the day before)")
    return moment


def _slugs(field: str, data: Any, most: int, noun: str) -> list[str]:
    if data is None:
        return []
    if (
        not isinstance(data, list)
        or len(data) > most
        or not all(isinstance(t, str) for t in data)
        or len(set(data)) != len(data)
    ):
        raise TermsInvalid(field, f"at most {most} {noun} slugs, each once")
    return data


def _templates(data: list[str], currency: str) -> tuple[str, ...]:
    found = set(
        GameTemplate.objects.filter(slug__in=data, currency=currency).values_list("slug", flat=True)
    )
    if unknown := sorted(set(data) - found):
        raise TermsInvalid("templates", f"no template in {currency}: {', '.join(unknown)}")
    return tuple(sorted(data))


def _tournaments(data: list[str], client: ApiClient, currency: str) -> tuple[str, ...]:
    """The client's tournaments in the currency, neither finished nor cancelled (a finished
    one's points could never accrue: they accrue as its final pays)."""
    over = (Tournament.Status.FINISHED, Tournament.Status.CANCELLED)
    found = set(
        Tournament.objects.filter(client=client, slug__in=data, currency=currency)
        .exclude(status__in=over)
        .values_list("slug", flat=True)
    )
    if unknown := sorted(set(data) - found):
        raise TermsInvalid(
            "tournaments",
            f"no tournament of this client in {currency} still to finish: {', '.join(unknown)}",
        )
    return tuple(sorted(data))


def _parameters(scoring: Any, data: Any) -> dict[str, Decimal]:
    if scoring not in rules.PARAMETERS:
        raise TermsInvalid("scoring", '"fee" or "results"')
    defaults = rules.PARAMETERS[scoring]
    if data is None:
        return dict(defaults)
    if not isinstance(data, dict) or set(data) - set(defaults):
        raise TermsInvalid("scoring_parameters", f"only {', '.join(sorted(defaults))}")
    out = dict(defaults)
    for name, value in data.items():
        number = decimal_of("scoring_parameters", value)
        if not 0 < number <= MAX_PARAMETER or number != number.quantize(Decimal("0.01")):
            raise TermsInvalid(
                "scoring_parameters", f"{name}: above 0, at most {MAX_PARAMETER}, two places"
            )
        out[name] = number
    return out


def _prizes_checked(client: ApiClient, currency: str, prizes: tuple[PrizeRow, ...]) -> None:
    """A seat's target as a satellite's (the client's, in the currency, registering, not a
    freeroll); the whole table, seats at its entry fee, at most what one ledger transfer may
    move (the payout is one transfer)."""
    prize_ranks_checked(prizes)
    slug = next((row.target for row in prizes if row.kind == TICKET), None)
    seat = Decimal(0)
    if slug is not None:
        target = Tournament.objects.filter(client=client, slug=slug).first()
        if target is None:
            raise TermsInvalid("prizes", f"no tournament {slug!r} of this client")
        if target.currency != currency or target.status != Tournament.Status.REGISTERING:
            raise TermsInvalid("prizes", f"{slug!r} must be registering and in {currency}")
        if target.entry_fee <= 0:
            raise TermsInvalid("prizes", f"{slug!r} is a freeroll: a seat in it is worth 0")
        seat = target.entry_fee
    total = sum(
        (seat if row.kind == TICKET else row.amount) * (row.rank_to - row.rank_from + 1)
        for row in prizes
    )
    if total > settings.LEDGER_MAX_TRANSFER:
        limit = amount_text(settings.LEDGER_MAX_TRANSFER)
        raise TermsInvalid("prizes", f"the table pays {amount_text(total)}: at most {limit}")


def leaderboard_fields_checked(data: Any, *, now: datetime | None = None) -> LeaderboardSpec:
    """The fields of a new leaderboard, checked: `TermsInvalid` names the first field at fault."""
    slug, name, client = named_fields_checked(
        data, noun="a leaderboard", fields=FIELDS, required=REQUIRED
    )
    currency = data["currency"]
    if currency not in (CASH, CHIPS):
        raise TermsInvalid("currency", f"{CASH} or {CHIPS}")
    starts_at = _ist_midnight("starts_at", data["starts_at"])
    ends_at = _ist_midnight("ends_at", data["ends_at"])
    if not starts_at < ends_at <= starts_at + timedelta(days=MAX_DAYS):
        raise TermsInvalid("ends_at", f"after starts_at, at most {MAX_DAYS} days after")
    if ends_at <= (now or timezone.now()):
        raise TermsInvalid("ends_at", "must be in the future")
    templates = _slugs("templates", data.get("templates"), MAX_TEMPLATES, "template")
    tournaments = _slugs("tournaments", data.get("tournaments"), MAX_TOURNAMENTS, "tournament")
    if not templates and not tournaments:
        raise TermsInvalid("templates", "what counts: at least one template or tournament")
    counted = _templates(templates, currency), _tournaments(tournaments, client, currency)
    parameters = _parameters(data["scoring"], data.get("scoring_parameters"))
    prizes = prizes_of(data["prizes"], money="amount")
    _prizes_checked(client, currency, prizes)
    return LeaderboardSpec(
        slug, name.strip(), client, currency, starts_at, ends_at,
        *counted, data["scoring"], parameters, prizes,
    )  # fmt: skip


def slug_taken(slug: str) -> TermsInvalid:
    return TermsInvalid("slug", f"a leaderboard {slug!r} of this client exists already")


def leaderboard_create(*, spec: LeaderboardSpec, created_by: str) -> Leaderboard:
    try:
        with transaction.atomic():
            return Leaderboard.objects.create(
                client=spec.client,
                slug=spec.slug,
                name=spec.name,
                currency=spec.currency,
                starts_at=spec.starts_at,
                ends_at=spec.ends_at,
                templates=list(spec.templates),
                tournaments=list(spec.tournaments),
                scoring=spec.scoring,
                scoring_parameters={k: amount_text(v) for k, v in spec.parameters.items()},
                prizes=prizes_json(spec.prizes),
                status=Leaderboard.Status.RUNNING
                if spec.starts_at <= timezone.now()
                else Leaderboard.Status.SCHEDULED,
                created_by=created_by,
            )
    except IntegrityError as exc:
        raise slug_taken(spec.slug) from exc


def leaderboard_rows(leaderboard: Leaderboard) -> tuple[PrizeRow, ...]:
    """The stored prize table as rows (it was checked when created)."""
    return prizes_of(leaderboard.prizes, money="amount")


def leaderboard_parameters(leaderboard: Leaderboard) -> dict[str, Decimal]:
    return {k: Decimal(v) for k, v in leaderboard.scoring_parameters.items()}


# --- maker-checker -----------------------------------------------------------------------------


def new_leaderboard_checked(spec: dict[str, Any]) -> LeaderboardSpec:
    checked = leaderboard_fields_checked(spec)
    if Leaderboard.objects.filter(client=checked.client, slug=checked.slug).exists():
        raise slug_taken(checked.slug)
    return checked


def new_leaderboard_propose(
    *, proposed_by: AbstractBaseUser, spec: dict[str, Any], reason: str
) -> NewLeaderboard:
    permission_required(proposed_by, "tournaments.add_newleaderboard")
    checked = new_leaderboard_checked(spec)
    return NewLeaderboard.objects.create(
        slug=checked.slug,
        spec=spec,
        reason=reason_required(reason, "a new leaderboard"),
        proposed_by=proposed_by,
    )


def new_leaderboard_apply(proposal: NewLeaderboard) -> None:
    """What approving does (inside the decision's transaction): checked again (the slug may have
    been taken, the period may have ended), then the leaderboard."""
    checked = new_leaderboard_checked(proposal.spec)
    proposal.leaderboard = leaderboard_create(
        spec=checked, created_by=f"admin: {proposal}, proposed by {proposal.proposed_by}"
    )
    proposal.save(update_fields=["leaderboard"])
