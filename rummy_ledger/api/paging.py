"""Cursor paging of the list endpoints: `?after=<cursor>&limit=<1..500>` answers
`{"<items>": [...], "next": <cursor or null>}`, oldest first.

A cursor is opaque to clients (they pass `next` back as it is); here it is the row id of the last
item answered, and a page holds the rows after it in id order, so reading on from each `next`
walks every row once; `next` is null after the last page. A list is read as it is at each
request: a row that changes meanwhile (a game closing while the client pages its open games)
shows as it is when its page is read.

Query parameters are taken as strictly as bodies (`rummy_ledger.api.fields`): an unknown one, one
given twice, or a value outside what the schema declares is a 400 naming it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.core.validators import RegexValidator
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.request import Request

from rummy_ledger.api.fields import StrictCharField, StrictSerializer

LIMIT_DEFAULT = 100
LIMIT_MAX = 500
CURSOR = r"[0-9]{1,18}"  # a row id below 10**18 (PostgreSQL's bigint holds it)
_LIMIT = re.compile(r"[1-9][0-9]{0,2}")


def after_parameter(cursor: str, example: str, start: str) -> OpenApiParameter:
    """`after` as the schema shows it: a cursor matching `cursor`; without it, `start`."""
    return OpenApiParameter(
        "after",
        {"type": "string", "pattern": f"^(?!.*\\n){cursor}$", "example": example},
        OpenApiParameter.QUERY,
        description="A cursor: the `next` of the previous page, passed back as it is (opaque). "
        f"Without it, {start}.",
    )


AFTER_PARAMETER = after_parameter(CURSOR, "1234", "the list starts at its oldest item")
LIMIT_PARAMETER = OpenApiParameter(
    "limit",
    {"type": "integer", "minimum": 1, "maximum": LIMIT_MAX, "default": LIMIT_DEFAULT},
    OpenApiParameter.QUERY,
    description=f"How many items a page holds at most: 1 to {LIMIT_MAX} ({LIMIT_DEFAULT} when "
    "absent).",
)
NEXT = "The cursor of the next page (pass it as `after`); null after the last page."


def query_parameter(name: str, schema: dict, description: str) -> OpenApiParameter:
    """A list's own filter, optional, as the schema shows it."""
    return OpenApiParameter(name, schema, OpenApiParameter.QUERY, description=description)


class LimitField(serializers.Field):
    """`limit` as a query string carries it: a whole number in canonical decimal, 1 to 500."""

    default_error_messages = {"invalid": f"A whole number from 1 to {LIMIT_MAX}."}

    def to_internal_value(self, data):
        if not isinstance(data, str) or not _LIMIT.fullmatch(data) or int(data) > LIMIT_MAX:
            self.fail("invalid")
        return int(data)


class PageQuery(StrictSerializer):
    """The paging parameters; a list with filters of its own subclasses it."""

    default_error_messages = {
        "unknown": "Unknown query parameter: this operation does not take it."
    }

    after = StrictCharField(
        required=False,
        validators=[RegexValidator(f"^{CURSOR}\\Z", "A cursor is the `next` of a page.")],
    )
    limit = LimitField(required=False, default=LIMIT_DEFAULT)


@dataclass(frozen=True)
class PageAsked:
    """What a list request asks: its filters, the rows after `after_id`, at most `limit`."""

    filters: dict[str, Any]
    after_id: int | None
    limit: int

    @property
    def count(self) -> int:
        """How many rows to read: one more than a page, to know whether another follows."""
        return self.limit + 1


def query_read(query_class: type[StrictSerializer], request: Request) -> dict[str, Any]:
    """The request's query parameters as `query_class` takes them (a 400 in the envelope if
    not: each unknown or repeated parameter named)."""
    params = request.query_params
    repeated = sorted(name for name, values in params.lists() if len(values) > 1)
    if repeated:
        raise serializers.ValidationError({name: ["Given more than once."] for name in repeated})
    serializer = query_class(data=params.dict())
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def page_asked(query_class: type[PageQuery], request: Request) -> PageAsked:
    """The request's paging and filters as `query_class` takes them (`query_read`)."""
    data = query_read(query_class, request)
    after = data.pop("after", None)
    limit = data.pop("limit")
    return PageAsked(data, None if after is None else int(after), limit)


def page_answer(
    name: str, rows: Sequence, asked: PageAsked, item: Callable[[Any], dict]
) -> dict[str, Any]:
    """`{name: [item(row), ...], "next"}` from the rows a selector read (`asked.count` at most,
    in id order)."""
    shown = list(rows[: asked.limit])
    more = len(rows) > asked.limit
    return {name: [item(row) for row in shown], "next": str(shown[-1].pk) if more else None}
