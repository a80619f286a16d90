"""The admin's forms for a tournament's money terms and for a new tournament. They only turn
what finance typed into the fields of `manage.py create_tournament`'s file (amounts stay the
typed text, a rebuy is three boxes, the rounds and the prize table one line each): the checks,
and their messages, are the file's own (`tournaments.tournaments.terms`, `setup`).

The rounds are written one per line as `qualify_top 2`, `qualify_min_chips 1200`, `final`; the
prize table as `1 50.00`, `2-3 25.00` (ranks, then the percent each of them gets)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from django import forms
from django.contrib.admin import widgets

from rummy_ledger.api.models import ApiClient
from tournaments.errors import TermsInvalid
from tournaments.models import NewTournament, Tournament, TournamentChange
from tournaments.tournaments.services.new_tournaments import new_tournament_checked
from tournaments.tournaments.services.terms_changes import (
    money_terms,
    tournament_change_checked,
)
from tournaments.tournaments.terms import CASH, CHIPS
from wallets.admin.proposals import ProposalForm

_WHOLE = re.compile(r"-?[0-9]{1,12}")
REBUY_BOXES = ("rebuy_price", "rebuy_max_per_player", "rebuy_until_round")


def whole_or_text(text: str) -> int | str:
    """A typed whole number as an int; anything else as typed, for the check to refuse."""
    text = text.strip()
    return int(text) if _WHOLE.fullmatch(text) else text


def rebuy_of_boxes(price: str, max_per_player: str, until_round: str) -> dict | None:
    if not (price.strip() or max_per_player.strip() or until_round.strip()):
        return None
    return {
        "price": price.strip(),
        "max_per_player": whole_or_text(max_per_player),
        "until_round": whole_or_text(until_round),
    }


def prizes_of_text(text: str, money: str = "percent") -> list[dict]:
    """The prize table typed one row per line: the ranks, then the `money` each gets (a
    tournament's percent, a leaderboard's amount), or `ticket <slug>`."""
    rows = []
    for line in filter(None, (line.strip() for line in text.splitlines())):
        parts = line.split()
        if len(parts) == 3 and parts[1] == "ticket":
            rows.append({"ranks": parts[0], "kind": "ticket", "tournament": parts[2]})
            continue
        if len(parts) != 2:
            raise TermsInvalid(
                "prizes",
                f'one row per line, the ranks then the {money} ("4-6 5.00") or a ticket '
                f'("1-2 ticket sunday-100"), not {line!r}',
            )
        rows.append({"ranks": parts[0], money: parts[1]})
    return rows


def prizes_text(rows: Sequence[dict]) -> str:
    return "\n".join(
        f"{row['ranks']} ticket {row['tournament']}"
        if row.get("kind") == "ticket"
        else f"{row['ranks']} {row['percent']}"
        for row in rows
    )


def rounds_of_text(text: str) -> list[dict]:
    rounds: list[dict] = []
    for line in filter(None, (line.strip() for line in text.splitlines())):
        name, _, value = line.partition(" ")
        rounds.append({name: True if name == "final" and not value else whole_or_text(value)})
    return rounds


def rounds_text(rounds: Sequence[dict]) -> str:
    return ", ".join(
        " ".join(f"{k} {v}" if k != "final" else k for k, v in r.items()) for r in rounds
    )


def form_terms(data: dict) -> dict[str, Any]:
    """The money terms under the file's names (amounts as typed)."""
    return {
        "entry_fee": data["entry_fee"].strip(),
        "fee_percent": data["fee_percent"].strip(),
        "guarantee": data["guarantee"].strip(),
        "rebuy": rebuy_of_boxes(*(data[name] for name in REBUY_BOXES)),
        "prizes": prizes_of_text(data["prizes"]),
    }


def form_spec(data: dict) -> dict[str, Any]:
    """A new tournament's fields, as create_tournament's file holds them."""
    return {
        "slug": data["slug"].strip(),
        "name": data["name"],
        "client": data["client"].name,
        "currency": data["currency"],
        **form_terms(data),
        "min_players": whole_or_text(data["min_players"]),
        "max_players": whole_or_text(data["max_players"]),
        "table_size": whole_or_text(data["table_size"]),
        "registration_closes_at": data["registration_closes_at"].isoformat(),
        "bonus_cap_percent": data["bonus_cap_percent"].strip(),
        "rounds": rounds_of_text(data["rounds"]),
    }


class TermsForm(ProposalForm):
    """The money-term boxes shared by both forms, and where a refusal is shown: on the box of
    the field the check names."""

    entry_fee = forms.CharField(max_length=20, help_text="0.00: a freeroll")
    fee_percent = forms.CharField(
        label="Fee %", max_length=20, help_text="on entries and rebuys; 0 for chips"
    )
    guarantee = forms.CharField(max_length=20, help_text="the smallest prize pool; 0.00: none")
    rebuy_price = forms.CharField(
        max_length=20, required=False, help_text="all three empty: no rebuys"
    )
    rebuy_max_per_player = forms.CharField(label="Rebuys per player", max_length=6, required=False)
    rebuy_until_round = forms.CharField(label="Rebuys until round", max_length=6, required=False)
    prizes = forms.CharField(
        label="Prize table",
        max_length=20_000,
        widget=forms.Textarea(attrs={"rows": 5, "cols": 30}),
        help_text='one row per line: the ranks, then the percent each gets ("2-3 25.00")',
    )
    boxes = {"rebuy": "rebuy_price"}

    def refused(self, exc) -> None:
        field = exc.details.get("field")
        field = self.boxes.get(field, field)
        self.add_error(field if field in self.fields else None, exc.message)


class TournamentChangeForm(TermsForm):
    class Meta:
        model = TournamentChange
        fields = ["tournament", "reason"]
        widgets = {"reason": forms.Textarea(attrs={"rows": 3, "cols": 60})}

    def check(self, data: dict) -> None:
        tournament_change_checked(tournament=data["tournament"], **form_terms(data))


def change_initial(tournament: Tournament) -> dict[str, str]:
    """The boxes filled with the terms in force (proposing starts from them)."""
    terms = money_terms(tournament)
    rebuy = terms["rebuy"] or {}
    return {
        **{name: terms[name] for name in ("entry_fee", "fee_percent", "guarantee")},
        **{f"rebuy_{k}": str(rebuy.get(k, "")) for k in ("price", "max_per_player", "until_round")},
        "prizes": prizes_text(terms["prizes"]),
    }


class NewTournamentForm(TermsForm):
    slug = forms.CharField(max_length=64, help_text="a-z, 0-9, - and _: the lobby's name for it")
    name = forms.CharField(max_length=120)
    client = forms.ModelChoiceField(
        ApiClient.objects.filter(is_active=True).order_by("name"),
        to_field_name="name",
        help_text="the lobby (an API client with the games scope) it belongs to",
    )
    currency = forms.ChoiceField(choices=[(CASH, "Cash (INR)"), (CHIPS, "Practice chips (CHP)")])
    min_players = forms.CharField(max_length=7)
    max_players = forms.CharField(max_length=7)
    table_size = forms.CharField(max_length=2, initial="6", help_text="2 to 6")
    registration_closes_at = forms.SplitDateTimeField(
        widget=widgets.AdminSplitDateTime, help_text="IST"
    )
    bonus_cap_percent = forms.CharField(label="Bonus cap %", max_length=20, initial="10.00")
    rounds = forms.CharField(
        max_length=2_000,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 30}),
        initial="qualify_top 2\nfinal",
        help_text="one per line: qualify_top 2, qualify_min_chips 1200, final (the last one)",
    )

    class Meta:
        model = NewTournament
        fields = ["reason"]
        widgets = {"reason": forms.Textarea(attrs={"rows": 3, "cols": 60})}

    def check(self, data: dict) -> None:
        new_tournament_checked(form_spec(data))
