"""Finance's maker-checker on tournaments: new money terms for a tournament nobody has registered
for (`TournamentChange`, proposed from the tournament's page) and a new tournament
(`NewTournament`, proposed from the tournaments' list, created when approved), and tickets
issued to players from promotions (`TicketIssue`, issued when approved). Operators
propose, another person approves or rejects on the proposal's page (`ProposalAdmin`); the forms
refuse what `manage.py create_tournament` refuses, with its messages."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.contrib.admin import widgets
from django.utils.dateparse import parse_datetime
from django.utils.html import format_html_join

from tournaments.models import NewTournament, TicketIssue, Tournament, TournamentChange
from tournaments.tournaments.admin.forms import (
    REBUY_BOXES,
    NewTournamentForm,
    TournamentChangeForm,
    change_initial,
    form_spec,
    form_terms,
    rounds_text,
)
from tournaments.tournaments.services.new_tournaments import new_tournament_propose
from tournaments.tournaments.services.terms_changes import change_terms, tournament_change_propose
from tournaments.tournaments.services.tickets import ticket_issue_checked, ticket_issue_propose
from wallets.admin.base import NoDeleteAdmin, link
from wallets.admin.proposals import ProposalAdmin, ProposalForm
from wallets.money.formatting import ist, money

TERM_LABELS = {
    "entry_fee": "entry fee",
    "fee_percent": "fee %",
    "guarantee": "guarantee",
    "rebuy": "rebuy",
    "prizes": "prize table",
}
TERM_BOXES = ["entry_fee", "fee_percent", "guarantee", *REBUY_BOXES, "prizes"]


def term_shown(name: str, value, currency: str) -> str:
    """A money term as finance reads it: `₹100.00`, `15.00%`, `ranks 1: 50.00%, 2-3: 25.00%`."""
    if name in ("entry_fee", "guarantee"):
        return money(value, currency)
    if name == "fee_percent":
        return f"{value}%"
    if name == "prizes":
        return "ranks " + ", ".join(
            f"{row['ranks']}: a ticket to {row['tournament']}"
            if row.get("kind") == "ticket"
            else f"{row['ranks']}: {row['percent']}%"
            for row in value
        )
    if value is None:
        return "none"
    price = money(value["price"], currency)
    return f"{price}, {value['max_per_player']} per player until round {value['until_round']}"


def change_shown(change: TournamentChange) -> str:
    """`entry fee: ₹100.00 → ₹200.00; fee %: 15.00% → 12.50%`: only what the change changes."""
    before, after = change.previous, change_terms(change)
    currency = change.tournament.currency
    parts = [
        (label, term_shown(name, before[name], currency), term_shown(name, after[name], currency))
        for name, label in TERM_LABELS.items()
        if before[name] != after[name]
    ]
    return format_html_join("; ", "{}: {} → {}", parts)


@admin.register(TournamentChange)
class TournamentChangeAdmin(ProposalAdmin, NoDeleteAdmin):
    approve_effect = "gives the tournament these money terms (refused once anyone has registered)"
    list_display = [
        "id",
        "tournament",
        "change",
        "status",
        "proposed_by",
        "proposed_at",
        "decided_by",
    ]
    list_filter = ["status"]
    list_select_related = ["tournament", "proposed_by", "decided_by"]
    search_fields = ["tournament__slug"]
    actions = ["approve", "reject"]
    form = TournamentChangeForm
    readonly_fields = ["tournament", "change", *ProposalAdmin.decision_fields]

    add_fields = ["tournament", *TERM_BOXES, "reason"]

    def get_changeform_initial_data(self, request):
        """Proposing from a tournament's page starts from the terms in force."""
        initial = super().get_changeform_initial_data(request)
        tournament = Tournament.objects.filter(
            pk=str(initial.get("tournament", "")) or None
        ).first()
        if tournament is not None:
            initial.update(change_initial(tournament))
        return initial

    def propose(self, request, data):
        return tournament_change_propose(
            proposed_by=request.user,
            tournament=data["tournament"],
            reason=data["reason"],
            **form_terms(data),
        )

    def decided(self, request, proposal, approving: bool) -> None:
        """The tournament's own history says when its terms changed, and by which change."""
        super().decided(request, proposal, approving)
        if approving:
            message = f"Money terms changed by {proposal}: {change_shown(proposal)}"
            self.log_change(request, proposal.tournament, message)

    @admin.display(description="change")
    def change(self, obj):
        return change_shown(obj)


SPEC_LABELS = {
    "slug": "slug",
    "name": "name",
    "client": "client",
    "currency": "currency",
    **TERM_LABELS,
    "min_players": "min players",
    "max_players": "max players",
    "table_size": "table size",
    "registration_closes_at": "registration closes at",
    "bonus_cap_percent": "bonus cap %",
    "rounds": "rounds",
}


@admin.register(NewTournament)
class NewTournamentAdmin(ProposalAdmin, NoDeleteAdmin):
    approve_effect = "creates the tournament: the lobby can register players at once"
    list_display = ["id", "slug", "status", "proposed_by", "proposed_at", "decided_by", "created"]
    list_filter = ["status"]
    list_select_related = ["tournament", "proposed_by", "decided_by"]
    search_fields = ["slug"]
    actions = ["approve", "reject"]
    form = NewTournamentForm
    readonly_fields = ["slug", "terms", "created", *ProposalAdmin.decision_fields]

    add_fields = [
        "slug", "name", "client", "currency", *TERM_BOXES, "min_players", "max_players",
        "table_size", "registration_closes_at", "bonus_cap_percent", "rounds", "reason",
    ]  # fmt: skip

    def propose(self, request, data):
        return new_tournament_propose(
            proposed_by=request.user, spec=form_spec(data), reason=data["reason"]
        )

    @admin.display(description="tournament")
    def terms(self, obj):
        spec = obj.spec
        currency = spec.get("currency", "")
        rows = []
        for name, label in SPEC_LABELS.items():
            value = spec.get(name)
            if name in TERM_LABELS:
                shown = term_shown(name, value, currency)
            elif name == "rounds":
                shown = rounds_text(value)
            elif name == "bonus_cap_percent":
                shown = f"{value}%"
            elif name == "registration_closes_at":
                shown = ist(parse_datetime(value))
            else:
                shown = "-" if value is None else str(value)
            rows.append((label, shown))
        return format_html_join("", "<div><strong>{}</strong>: {}</div>", rows)

    @admin.display(description="created")
    def created(self, obj):
        return link(obj.tournament) if obj.tournament_id else "-"


class TicketIssueForm(ProposalForm):
    players_text = forms.CharField(
        label="Players",
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="the players' external ids, one per line",
    )

    expires_at = forms.SplitDateTimeField(
        label="Expires at",
        widget=widgets.AdminSplitDateTime,
        help_text="IST; at the latest when the tournament's registration closes (the value of a "
        "ticket not used by then goes back to promotions)",
    )

    class Meta:
        model = TicketIssue
        fields = ["tournament", "reason"]

    def check(self, data: dict) -> None:
        data["players"] = data["players_text"].split()
        ticket_issue_checked(
            tournament=data["tournament"], players=data["players"], expires_at=data["expires_at"]
        )


@admin.register(TicketIssue)
class TicketIssueAdmin(ProposalAdmin, NoDeleteAdmin):
    approve_effect = "issues each player a ticket from promotions now"
    list_display = ["id", "tournament", "players_count", "status", "proposed_by", "decided_by"]
    list_filter = ["status"]
    list_select_related = ["tournament", "proposed_by", "decided_by"]
    search_fields = ["tournament__slug"]
    actions = ["approve", "reject"]
    form = TicketIssueForm
    readonly_fields = ["tournament", "players_shown", "expires_at", *ProposalAdmin.decision_fields]

    add_fields = ["tournament", "players_text", "expires_at", "reason"]

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "tournament":
            kwargs["queryset"] = Tournament.objects.filter(status=Tournament.Status.REGISTERING)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def propose(self, request, data):
        return ticket_issue_propose(
            proposed_by=request.user,
            tournament=data["tournament"],
            players=data["players"],
            expires_at=data["expires_at"],
            reason=data["reason"],
        )

    @admin.display(description="players")
    def players_count(self, obj):
        return len(obj.players)

    @admin.display(description="players")
    def players_shown(self, obj):
        return ", ".join(obj.players)
