"""POST /api/v1/hands/evaluate: the rules engine over REST; no money moves."""

from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.response import Response

from rummy_ledger.api.fields import StrictBooleanField, StrictCharField, StrictSerializer
from rummy_ledger.api.views import ScopedView, valid_data
from tournaments import rummy
from tournaments.games.api.serializers import HAND_WITH_DRAW, GroupsField, cards_field

DECLARATION_EXAMPLE = {
    "wild_joker": "KD",
    "groups": [
        ["AS", "2S", "3S"],
        ["6C", "8C", "KH"],
        ["4D", "4S", "4C", "4H"],
        ["JD", "JH", "PJ"],
    ],
}
BEST_EXAMPLE = {
    "wild_joker": "5D",
    "best": True,
    "cards": ["AS", "2S", "3S", "7H", "8H", "9H", "KC", "KD", "KS", "4C", "5C", "PJ", "QD"],
}


@extend_schema_field(
    {
        "oneOf": [
            {"type": "string", "enum": sorted(rummy.PRESETS), "description": "a preset"},
            {
                "type": "object",
                "description": "a preset (`preset`, S0 if absent) and the fields it overrides",
                "properties": {
                    "preset": {"type": "string", "enum": sorted(rummy.PRESETS)},
                    **rummy.override_kinds(),
                },
                "additionalProperties": False,
            },
        ]
    }
)
class RulesField(serializers.JSONField):
    """A rule variant: a preset's name, or an object of a preset and overrides
    (`rummy.rules_from_spec` refuses anything else)."""


class HandIn(StrictSerializer):
    """A hand is 13 cards, or 14 with the card drawn before a show: never more (the best
    arrangement's search grows exponentially with the cards; 40 cards took 10 s)."""

    wild_joker = StrictCharField(
        max_length=4, help_text="The cut joker, e.g. `KD`: every king is a joker."
    )
    groups = GroupsField(required=False, help_text="A declaration: the hand as grouped.")
    cards = cards_field(
        max_length=HAND_WITH_DRAW,
        required=False,
        help_text="With `best`: 13 (or 14) cards to arrange.",
    )
    best = StrictBooleanField(
        default=False, help_text="true: find the best arrangement of `cards`."
    )
    rules = RulesField(
        required=False,
        help_text='A rule variant: a preset and overrides, e.g. `{"preset": "S1"}`; S0 if absent.',
    )

    def validate(self, data):
        if data["best"] and "cards" not in data:
            raise serializers.ValidationError({"cards": "best arrangement needs 'cards'"})
        if not data["best"] and "groups" not in data:
            raise serializers.ValidationError({"groups": "give 'groups' (or 'cards' with best)"})
        try:
            data["rules"] = rummy.rules_from_spec(data.get("rules"))
        except rummy.RuleSetError as exc:
            raise serializers.ValidationError({"rules": str(exc)}) from exc
        try:
            rummy.wild_rank(data["wild_joker"], data["rules"])
        except rummy.CardError as exc:
            raise serializers.ValidationError({"wild_joker": str(exc)}) from exc
        return data


class GroupOut(serializers.Serializer):
    cards = serializers.ListField(child=serializers.CharField(), help_text="The group's cards.")
    kind = serializers.ChoiceField(
        choices=["pure_sequence", "impure_sequence", "set", "jokers", "invalid"],
        help_text="What the group is under the rules.",
    )
    reason = serializers.CharField(allow_null=True, help_text="Why it is invalid; else null.")


class EvaluationOut(serializers.Serializer):
    valid = serializers.BooleanField(help_text="A valid show.")
    points = serializers.IntegerField(help_text="The hand's points (0 for a valid show).")
    groups = GroupOut(many=True, help_text="Each group as the engine read it.")
    errors = serializers.ListField(
        child=serializers.CharField(), help_text="Why the show is not valid."
    )


class HandEvaluateView(ScopedView):
    required_scopes = ("games",)

    @extend_schema(
        request=HandIn,
        responses=EvaluationOut,
        summary="Check a declaration, or find the best arrangement of 13 (or 14) cards",
        examples=[
            OpenApiExample("declaration", value=DECLARATION_EXAMPLE, request_only=True),
            OpenApiExample("best arrangement", value=BEST_EXAMPLE, request_only=True),
        ],
    )
    def post(self, request):
        hand = valid_data(HandIn, request)
        field = "cards" if hand["best"] else "groups"
        try:
            if hand["best"]:
                result = rummy.best_arrangement(hand["cards"], hand["wild_joker"], hand["rules"])
            else:
                result = rummy.evaluate_declaration(
                    hand["groups"], hand["wild_joker"], hand["rules"]
                )
        except rummy.CardError as exc:
            raise serializers.ValidationError({field: [str(exc)]}) from exc
        return Response(result.to_dict())
