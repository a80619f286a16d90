"""`{% load finance %}`: the template side of `wallets.money.formatting`, and the reports list.

{{ entry.amount|money }}          a Money: ₹1,23,456.78 or 1,234 chips
{{ row.fee|money:row.currency }}  a bare Decimal and its currency code
{{ entry.created_at|ist }}        2026-11-23 14:05:09 IST
{{ count|number }}                12,34,567 (a count, grouped the same way)
{% finance_reports as reports %}  [(report, url)] the user may open (wallets.admin.reports)
{% finance_dashboard as sections %}  [(section, [line])] of the home page (wallets.admin.dashboard)
"""

from django import template

from wallets.admin import dashboard, reports
from wallets.money import formatting

register = template.Library()


@register.filter
def money(value, currency=None) -> str:
    return formatting.money(value, currency)


@register.filter
def ist(value) -> str:
    return formatting.ist(value)


@register.filter
def number(value) -> str:
    return formatting.count(value)


@register.simple_tag(takes_context=True)
def finance_reports(context):
    return reports.reports_for(context["request"].user)


@register.simple_tag(takes_context=True)
def finance_dashboard(context):
    return dashboard.dashboard_for(context["request"].user)
