"""A template's terms are validated once, at save: an unplayable template is refused naming the
field, and one broken template never breaks the list of templates for the others."""

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from tests.builders import staff, staff_client, template
from tournaments.models import GameTemplate

pytestmark = pytest.mark.django_db

BAD = {
    "0 decks": ({"rules": {"decks": 0}}, "rules", "decks"),
    "unknown rule": ({"rules": {"deks": 2}}, "rules", "deks"),
    "unknown preset": ({"rules": "S9"}, "rules", "S9"),
    "negative fee": ({"fee_percent": Decimal("-1")}, "fee_percent", "percentage"),
    "fee of 100 %": ({"fee_percent": Decimal("100")}, "fee_percent", "percentage"),
    "point value 0": ({"point_value": Decimal("0")}, "point_value", "above zero"),
    "no point value": ({"point_value": None}, "point_value", "above zero"),
    "seats 9": ({"seats": 9}, "seats", "2 to 6"),
    "split policy": ({"split_policy": "halves"}, "split_policy", "one of"),
    "entry buckets": ({"entry_buckets": ["deposit", "deposit"]}, "entry_buckets", "distinct"),
}


@pytest.mark.parametrize("case", BAD)
def test_clean_refuses_unplayable_terms_naming_the_field(case):
    fields, field, words = BAD[case]
    tpl = GameTemplate(slug="t", format="points", point_value=Decimal("2.00"), **{})
    for name, value in fields.items():
        setattr(tpl, name, value)
    with pytest.raises(ValidationError) as refused:
        tpl.clean()
    assert field in refused.value.message_dict, refused.value.message_dict
    assert words in " ".join(refused.value.message_dict[field])


def test_rummy500_templates_seat_up_to_8_and_13_card_ones_up_to_6():
    r500 = GameTemplate(slug="r", format="rummy500", entry_fee=Decimal("20.00"), seats=8)
    r500.full_clean()
    r500.seats = 9
    with pytest.raises(ValidationError) as refused:
        r500.full_clean()
    assert "2 to 8" in " ".join(refused.value.message_dict["seats"])
    points = GameTemplate(slug="p", format="points", point_value=Decimal("2.00"), seats=7)
    with pytest.raises(ValidationError) as refused:
        points.full_clean()
    assert "2 to 6" in " ".join(refused.value.message_dict["seats"])


def test_a_pool_template_may_split_by_drop_value():
    pool = GameTemplate(
        slug="p", format="pool101", entry_fee=Decimal("20.00"), split_policy="drop_value"
    )
    pool.full_clean()
    assert pool.game_terms().split_policy == "drop_value"


def test_a_pool_template_needs_a_pool_limit():
    # given: a pool 101 template on S1, a preset with no pool limit
    pool = GameTemplate(slug="p", format="pool101", entry_fee=Decimal("20.00"), rules="S1")
    # then: refused (nobody would ever be eliminated, and a split would have no drops to count)
    with pytest.raises(ValidationError) as refused:
        pool.full_clean()
    assert "pool_limit" in " ".join(refused.value.message_dict["rules"])
    # the same preset with its limit set plays as a pool game
    pool.rules = {"preset": "S1", "pool_limit": 101}
    pool.full_clean()
    assert pool.game_terms().rules.pool_limit == 101


def test_a_deals_template_needs_an_entry_fee_and_a_deal_count():
    tpl = GameTemplate(slug="d", format="deals", deals=3)
    with pytest.raises(ValidationError) as refused:
        tpl.clean()
    assert "entry_fee" in refused.value.message_dict
    tpl.entry_fee, tpl.deals = Decimal("5.00"), None
    with pytest.raises(ValidationError) as refused:
        tpl.clean()
    assert "deals" in refused.value.message_dict
    tpl.deals = 2
    tpl.clean()  # playable now


def test_the_admin_form_refuses_and_saves_nothing():
    client = staff_client(
        staff("root", superuser=True)
    )  # who adds templates (docs/finance-admin.md)
    data = {
        "slug": "points-bad",
        "name": "bad",
        "format": "points",
        "currency": "INR",
        "seats": 6,
        "point_value": "2.00",
        "entry_fee": "",
        "fee_percent": "10.00",
        "deals": "",
        "rules": '{"decks": 0}',
        "split_policy": "none",
        "entry_buckets": '["bonus", "deposit", "winnings"]',
        "active": "on",
    }
    response = client.post(reverse("admin:tournaments_gametemplate_add"), data)
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert "decks" in " ".join(errors["rules"])
    assert not GameTemplate.objects.filter(slug="points-bad").exists()


def test_one_broken_template_does_not_break_the_list(games_api, caplog):
    template("points-2", "points")
    template("pool-101", "pool101")
    broken = template("pool-201", "pool201")
    # a template broken behind the admin's back (an old row, a manual UPDATE)
    GameTemplate.objects.filter(pk=broken.pk).update(rules={"decks": 7})
    response = games_api.get("/api/v1/templates")
    assert response.status_code == 200
    assert [t["slug"] for t in response.json()["templates"]] == ["points-2", "pool-101"]
    assert "pool-201 is not playable" in caplog.text
