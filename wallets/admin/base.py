"""Shared pieces of the finance staff's admin pages (wallets and tournaments).

- Money is shown through `wallets.money.formatting` only (`money_display`): `₹1,23,456.78`,
  `1,234 chips`, never `2230625.00 INR`, `CHP0.00` or `None`. Times come from the admin's own
  display, set to `2026-11-23 14:05:09 IST` (rummy_ledger/date_formats), or `|ist` in templates.
- A list that needs more than its own rows (a balance summed from entries, the players of a
  transfer) loads it once for the page shown (`PageExtras`), never once per row.
- A refused page is the admin's own page, with the reason (`permission_denied`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date, datetime, time, timedelta

from django import forms
from django.contrib import admin
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.http import HttpResponseForbidden
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html

from wallets.money.formatting import money


class ReadOnlyAdmin(admin.ModelAdmin):
    """Ledger records: viewable by whoever may view them, never added, changed or deleted here.
    No filter facets: "Show counts" would count a big table once per filter choice."""

    show_facets = admin.ShowFacets.NEVER

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class ReadOnlyInline(admin.TabularInline):
    """Rows shown on another record's page, never added, changed or deleted there: a plain
    table (no per-row caption, no form fields)."""

    template = "admin/edit_inline/tabular_readonly.html"
    extra = 0
    can_delete = False
    select_related: tuple[str, ...] = ()

    def get_queryset(self, request):
        return super().get_queryset(request).select_related(*self.select_related)

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class TermSearch:
    """A ModelAdmin mixin: the search box filters by what the term names (`search(queryset,
    term)`: ids and exact references resolved by index look-ups, `wallets.admin.search`), never with
    Django's `icontains` across joined fields, which scans a big table whole."""

    def search(self, queryset, term: str):
        raise NotImplementedError

    def get_search_results(self, request, queryset, search_term):
        term = search_term.strip()
        return (self.search(queryset, term) if term else queryset), False


class NoDeleteAdmin(admin.ModelAdmin):
    def has_delete_permission(self, request, obj=None) -> bool:
        return False


def money_html(value, currency: str | None = None) -> str:
    """An amount for a page: the one format, kept on one line and right-aligned in tables."""
    return format_html('<span class="money">{}</span>', money(value, currency))


def money_display(
    field: str,
    *,
    currency: str | None = None,
    currency_field: str | None = None,
    description: str | None = None,
    order: bool = True,
):
    """An admin column or read-only field showing a Money field, or a Decimal field in a fixed
    `currency` or in the currency the row's `currency_field` holds."""

    def display(self, obj):
        code = getattr(obj, currency_field) if currency_field else currency
        return money_html(getattr(obj, field), code)

    display.short_description = description or field.replace("_", " ")
    if order:
        display.admin_order_field = field
    return display


def percent_display(field: str, description: str):
    """A percentage column or read-only field: `40.00%`, never a bare `40.00`."""

    @admin.display(description=description, ordering=field)
    def display(self, obj):
        value = getattr(obj, field)
        return "-" if value is None else f"{value}%"

    return display


class PageExtras:
    """A ModelAdmin mixin: `page_loaded(rows)` runs once on the rows of the list page shown,
    after pagination, to load what the columns need in one query for all of them."""

    def page_loaded(self, rows: Sequence) -> None:
        raise NotImplementedError

    def get_changelist(self, request, **kwargs):
        model_admin = self

        class PageChangeList(ChangeList):
            def get_results(self, request):
                super().get_results(request)
                model_admin.page_loaded(self.result_list)

        return PageChangeList


def staff_display(field: str, description: str):
    """A member of staff on a record's page, by name only: the admin would link the name to
    their user page, which only a superuser may open (a finance role followed it to a 403)."""

    @admin.display(description=description)
    def display(self, obj):
        return getattr(obj, field) or "-"

    return display


def link(obj, label=None):
    if obj is None:
        return "-"
    meta = obj._meta
    url = reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[obj.pk])
    return format_html('<a href="{}">{}</a>', url, label or obj)


def named_link(named) -> str:
    """A `wallets.admin.search.Named` (what a reference is called), linked to its page if it
    has one."""
    if not named.url:
        return named.label
    return format_html('<a href="{}">{}</a>', named.url, named.label)


def adopt(obj, created) -> None:
    """Make the admin's unsaved `obj` the row a service created, for the admin's next steps
    (its history entry, the redirect to the new row's page)."""
    obj.pk = created.pk
    obj.__dict__.update({k: v for k, v in created.__dict__.items() if not k.startswith("_")})


def changelist_link(model, label: str, **params) -> str:
    meta = model._meta
    url = reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return format_html('<a href="{}?{}">{}</a>', url, query, label)


# The days a report may cover: a ledger of this century (and `end + 1 day`, the exclusive bound
# the reports compute, never overflows: end=9999-12-31 was a 500).
EARLIEST_DAY = date(2000, 1, 1)
LATEST_DAY = date(2099, 12, 31)
_DAY_BOUNDS = [MinValueValidator(EARLIEST_DAY), MaxValueValidator(LATEST_DAY)]


class DateRangeForm(forms.Form):
    """A report's days, both inclusive (whole days in the platform's time zone)."""

    start = forms.DateField(widget=forms.DateInput(attrs={"type": "date"}), validators=_DAY_BOUNDS)
    end = forms.DateField(
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text="inclusive (whole day)",
        validators=_DAY_BOUNDS,
    )

    def clean(self):
        data = super().clean()
        if data.get("start") and data.get("end") and data["end"] < data["start"]:
            raise forms.ValidationError("The end comes before the start.")
        return data

    def period(self) -> tuple[datetime, datetime]:
        """The days chosen as moments: [start 00:00, the day after end 00:00) in local time."""
        tz = timezone.get_current_timezone()
        first, last = self.cleaned_data["start"], self.cleaned_data["end"]
        return (
            datetime.combine(first, time.min, tzinfo=tz),
            datetime.combine(last + timedelta(days=1), time.min, tzinfo=tz),
        )


class PlainDecimalField(forms.DecimalField):
    """A decimal as people write amounts and rates: ASCII digits with at most one point
    (`1000.50`). Django's own field also takes `1e3`, `+5` or ` 1_000`, which a person reading
    the proposal would not read as the amount it moves."""

    default_error_messages = {"plain": "Write a plain decimal such as 1000.50: digits, one point."}
    _PLAIN = re.compile(r"[0-9]+(\.[0-9]+)?")

    def to_python(self, value):
        if value not in self.empty_values and not self._PLAIN.fullmatch(str(value).strip()):
            raise ValidationError(self.error_messages["plain"], code="plain")
        return super().to_python(value)


# Every decimal of a model form in the admin is a plain one (`ModelAdmin.formfield_overrides`).
PLAIN_DECIMALS = {models.DecimalField: {"form_class": PlainDecimalField}}


def plain_formfield(field: models.Field, **kwargs) -> forms.Field | None:
    """A model field's form field, its decimals plain (`forms.fields_for_model`'s callback)."""
    if isinstance(field, models.DecimalField):
        kwargs = {"form_class": PlainDecimalField, **kwargs}
    return field.formfield(**kwargs)


def permission_denied(request, exception=None):
    """`handler403`: the admin's own page (header, the user's links), saying why."""
    context = {
        **admin.site.each_context(request),
        "title": "Not allowed",
        "reason": str(exception or ""),
    }
    return HttpResponseForbidden(render_to_string("403.html", context, request=request))
