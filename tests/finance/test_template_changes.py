"""A template's money terms (fee %, point value, entry fee, currency) change only
when one member of staff proposes and another approves, for the games opened after that; every
change is in the history. And the roles hold exactly what the code grants."""

from decimal import Decimal

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Group, Permission
from django.urls import reverse

from tests.builders import funded_player, points_game, staff, staff_client
from tournaments.errors import TermsInvalid
from tournaments.games.services.opening import game_open
from tournaments.games.services.templates import template_change_propose
from tournaments.models import MONEY_TERMS, GameTemplate, TemplateChange
from wallets.errors import PermissionRefused, ProposalInvalid, SelfApproval
from wallets.roles import OPERATOR, roles_ensure
from wallets.services.proposals import proposal_decide

pytestmark = pytest.mark.django_db


def terms(fee="12.50", point_value="2.00", currency="INR", entry_fee=None) -> dict:
    return {
        "currency": currency,
        "point_value": None if point_value is None else Decimal(point_value),
        "entry_fee": None if entry_fee is None else Decimal(entry_fee),
        "fee_percent": Decimal(fee),
    }


def propose(user, template, reason="rake review", **kw):
    return template_change_propose(
        proposed_by=user, template=template, reason=reason, **terms(**kw)
    )


def form_data(page) -> dict:
    """What the admin's proposal form holds when opened from a template: the terms in force."""
    form = page.context["adminform"].form
    data = {}
    for name, field in form.fields.items():
        value = form.initial.get(name, "")
        data[name] = field.prepare_value(value) if value not in (None, "") else ""
    data["rejoin_allowed"] = "on" if form.initial.get("rejoin_allowed") else ""
    return data


def decide(model, proposal, user, approve=True):
    return proposal_decide(model=model, proposal_id=proposal.pk, decided_by=user, approve=approve)


@pytest.fixture
def played(game_server):
    """points-2 (₹2 a point, 10% fee) and a game opened from it before any change."""
    return points_game(game_server, "before")


def test_a_fee_change_applies_to_games_opened_after_its_approval(
    operator, approver, played, game_server
):
    template = played.template
    change = propose(operator, template)

    template.refresh_from_db()
    assert template.fee_percent == Decimal("10.00")  # proposed: nothing changes yet

    decide(TemplateChange, change, approver)

    template.refresh_from_db()
    assert template.fee_percent == Decimal("12.50")
    for p in ("e", "f"):
        funded_player(p, "500.00")
    after, _ = game_open(
        client=game_server, game_id="after", template_slug="points-2", players=["e", "f"]
    )
    assert after.game_terms.fee_percent == Decimal("12.50")
    played.refresh_from_db()
    assert played.game_terms.fee_percent == Decimal("10.00")  # the game in play keeps its terms


def test_nobody_approves_their_own_change_and_operators_cannot_approve(operator, played):
    both = staff("both", "finance operator", "finance approver")
    own = propose(both, played.template)

    with pytest.raises(SelfApproval):
        decide(TemplateChange, own, both)
    with pytest.raises(PermissionRefused):
        decide(TemplateChange, own, operator)

    played.template.refresh_from_db()
    assert played.template.fee_percent == Decimal("10.00")


def test_viewers_and_approvers_cannot_propose(viewer, approver, played):
    for user in (viewer, approver):
        with pytest.raises(PermissionRefused):
            propose(user, played.template)
    assert not TemplateChange.objects.exists()


@pytest.mark.parametrize(
    ("kw", "error", "match"),
    [
        ({"fee": "10.00"}, ProposalInvalid, "nothing changes"),
        ({"fee": "100.00"}, TermsInvalid, "fee_percent"),
        ({"point_value": None}, TermsInvalid, "point value"),
        ({"point_value": "2.005"}, ProposalInvalid, "point value: .* 2 decimal places"),
    ],
)
def test_a_change_no_game_could_be_played_by_is_refused_at_proposal(
    operator, played, kw, error, match
):
    with pytest.raises(error, match=match):
        propose(operator, played.template, **kw)
    assert not TemplateChange.objects.exists()


def test_a_change_proposed_from_terms_since_replaced_is_refused(operator, approver, played):
    first = propose(operator, played.template, fee="12.50")
    second = propose(operator, played.template, fee="15.00")
    decide(TemplateChange, first, approver)

    with pytest.raises(ProposalInvalid, match="changed since"):
        decide(TemplateChange, second, approver)

    second.refresh_from_db()
    played.template.refresh_from_db()
    assert second.status == "proposed" and played.template.fee_percent == Decimal("12.50")


def test_proposed_and_approved_in_the_admin_and_kept_in_the_history(operator, approver, played):
    template = played.template
    add = reverse("admin:tournaments_templatechange_add")
    form = staff_client(operator).get(add, {"template": template.pk})
    assert form.context["adminform"].form.initial["fee_percent"] == Decimal("10.00")

    in_force = form_data(form)

    refused = staff_client(operator).post(add, {**in_force, "fee_percent": "150.00", "reason": "x"})
    assert refused.status_code == 200 and "fee" in refused.content.decode()
    assert not TemplateChange.objects.exists()

    staff_client(operator).post(
        add, {**in_force, "point_value": "3.00", "fee_percent": "12.50", "reason": "new prices"}
    )
    change = TemplateChange.objects.get()
    page = staff_client(approver).get(
        reverse("admin:tournaments_templatechange_change", args=[change.pk])
    )
    shown = page.content.decode()
    assert "fee %: 10.00% → 12.50%" in shown and "point value: ₹2.00 → ₹3.00" in shown
    assert "Approve" in shown

    decide_url = reverse("admin:tournaments_templatechange_decide", args=[change.pk])
    staff_client(approver).post(decide_url, {"decision": "approve", "note": "board approved"})

    template.refresh_from_db()
    assert (template.point_value, template.fee_percent) == (Decimal("3.00"), Decimal("12.50"))
    history = LogEntry.objects.filter(
        object_id=str(template.pk), content_type__model="gametemplate"
    )
    assert "fee %: 10.00% → 12.50%" in history.get().change_message
    change.refresh_from_db()
    assert change.decision_note == "board approved"
    template_page = staff_client(operator).get(
        reverse("admin:tournaments_gametemplate_change", args=[template.pk])
    )
    assert "approved, proposed by operator" in template_page.content.decode()


def test_the_groups_hold_exactly_what_the_code_grants(db):
    roles_ensure()
    operators = Group.objects.get(name=OPERATOR)
    stale = Permission.objects.get(codename="add_apiclient")
    operators.permissions.add(stale)  # as an older database has it

    roles_ensure()

    granted = set(operators.permissions.values_list("codename", flat=True))
    assert "add_apiclient" not in granted and "change_apiclient" not in granted
    assert "add_gametemplate" not in granted
    assert {"change_gametemplate", "add_templatechange", "add_adjustment"} <= granted


def test_templates_are_added_by_superusers_only(operator, superuser, db):
    data = {
        "slug": "pool-50", "name": "", "format": "pool101", "currency": "INR", "seats": 6,
        "point_value": "", "entry_fee": "50.00", "fee_percent": "0.00", "deals": "",
        "rules": "{}", "split_policy": "none", "entry_buckets": '["deposit"]',
        "bonus_cap_percent": "10", "active": "on",
    }  # fmt: skip
    add = reverse("admin:tournaments_gametemplate_add")

    assert staff_client(operator).post(add, data).status_code == 403
    assert staff_client(superuser).post(add, data).status_code == 302
    assert GameTemplate.objects.filter(slug="pool-50").count() == 1


# --- every term but the name and the active flag -------------------------------------------------


def test_every_field_of_a_template_is_classified_money_or_cosmetic():
    from tournaments.games.field_classes import FieldClasses
    from tournaments.models import TEMPLATE_FIELDS

    assert TEMPLATE_FIELDS.unclassified(GameTemplate) == []
    assert set(TEMPLATE_FIELDS.cosmetic) == {"name", "active"}
    # a field nobody classified (here: the slug forgotten) is named
    forgetful = FieldClasses(
        proposal=tuple(n for n in TEMPLATE_FIELDS.proposal if n != "slug"),
        cosmetic=TEMPLATE_FIELDS.cosmetic,
        system=TEMPLATE_FIELDS.system,
    )
    assert forgetful.unclassified(GameTemplate) == ["slug"]
    twice = FieldClasses(
        proposal=TEMPLATE_FIELDS.proposal,
        cosmetic=(*TEMPLATE_FIELDS.cosmetic, "rules"),
        system=TEMPLATE_FIELDS.system,
    )
    assert "rules" in twice.unclassified(GameTemplate)


def test_an_operator_alone_changes_no_term_in_the_admin(operator, played, game_server):
    """An operator cannot edit `rules` (which could make the next open hold ₹4,000 in escrow
    instead of ₹160, 80 points at ₹2), nor the bonus cap or the slug, directly."""
    from tournaments.games.services.templates import money_terms

    template = played.template
    other = GameTemplate.objects.create(
        slug="points-1", format="points", point_value=Decimal("1.00"), fee_percent=10
    )
    in_force = money_terms(template)
    url = reverse("admin:tournaments_gametemplate_change", args=[template.pk])
    attack = {
        "slug": "points-1-cash", "name": "Points ₹2", "format": "points", "currency": "INR",
        "seats": 2, "point_value": "2.00", "entry_fee": "", "fee_percent": "10.00",
        "deals": "", "rules": '{"preset": "S1", "cap": 4000, "first_drop_points": 4000}',
        "split_policy": "equal", "rejoin_allowed": "on", "entry_buckets": '["bonus"]',
        "bonus_cap_percent": "100.00", "active": "on",
    }  # fmt: skip

    page = staff_client(operator).get(url).content.decode()
    response = staff_client(operator).post(url, attack)

    for name in MONEY_TERMS:
        assert f'name="{name}"' not in page, name
    assert response.status_code == 302
    template.refresh_from_db()
    assert template.name == "Points ₹2"  # the name is cosmetic
    assert money_terms(template) == in_force
    # nor by the list's inline editing, which offers the active flag only
    listed = staff_client(operator).post(
        reverse("admin:tournaments_gametemplate_changelist"),
        {"form-TOTAL_FORMS": "2", "form-INITIAL_FORMS": "2", "form-0-id": template.pk,
         "form-0-active": "on", "form-0-slug": "x", "form-1-id": other.pk, "form-1-active": "on",
         "form-1-rules": '{"cap": 4000}', "_save": "Save"},
    )  # fmt: skip
    assert listed.status_code == 302
    template.refresh_from_db()
    assert money_terms(template) == in_force
    # the next game holds 80 points at ₹2 each, as before
    for p in ("e", "f"):
        funded_player(p, "500.00")
    game, _ = game_open(
        client=game_server, game_id="next", template_slug="points-2", players=["e", "f"]
    )
    assert game.collected == Decimal("320.00")


def test_rules_bonus_cap_and_slug_change_only_through_an_approved_proposal(
    operator, approver, played
):
    template = played.template
    rules = {"preset": "S1", "first_drop_points": 25}
    change = template_change_propose(
        proposed_by=operator,
        template=template,
        reason="S1 table",
        rules=rules,
        bonus_cap_percent=Decimal("5.00"),
        slug="points-2-s1",
        seats=4,
    )
    template.refresh_from_db()
    assert (template.rules, template.slug) == ({}, "points-2")  # proposed: nothing yet

    decide(TemplateChange, change, approver)

    template.refresh_from_db()
    assert (template.rules, template.bonus_cap_percent, template.slug, template.seats) == (
        rules,
        Decimal("5.00"),
        "points-2-s1",
        4,
    )
    assert template.fee_percent == Decimal("10.00")  # what it did not propose stays


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"slug": "points-1"}, "another template is called"),
        ({"slug": "not a slug"}, "slug"),
        ({"format": "snap"}, "format"),
        ({"seats": 40}, "seats"),
        ({"colour": "red"}, "not a term"),
    ],
)
def test_a_proposal_of_a_term_no_table_could_have_is_refused(operator, played, kw, match):
    GameTemplate.objects.create(
        slug="points-1", format="points", point_value=Decimal("1.00"), fee_percent=10
    )
    with pytest.raises((ProposalInvalid, TermsInvalid), match=match):
        template_change_propose(proposed_by=operator, template=played.template, reason="x", **kw)
    assert not TemplateChange.objects.exists()


def test_a_slug_swap_takes_approved_changes_and_a_change_from_the_old_slug_is_refused(
    operator, approver, played
):
    other = GameTemplate.objects.create(
        slug="points-1", format="points", point_value=Decimal("1.00"), fee_percent=10
    )
    first = template_change_propose(
        proposed_by=operator, template=other, reason="swap", slug="points-spare"
    )
    second = template_change_propose(
        proposed_by=operator, template=played.template, reason="swap", slug="points-9"
    )
    third = template_change_propose(
        proposed_by=operator, template=other, reason="x", fee_percent=Decimal("12.00")
    )
    decide(TemplateChange, first, approver)
    decide(TemplateChange, second, approver)

    with pytest.raises(ProposalInvalid, match="changed since"):
        decide(TemplateChange, third, approver)  # proposed from the old slug

    assert set(GameTemplate.objects.values_list("slug", flat=True)) == {
        "points-spare",
        "points-9",
    }
