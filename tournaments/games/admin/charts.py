"""The reports' bar charts as SVG shapes (no JavaScript, no CDN): one slot per day or month, a ₹
scale on the left and the periods below, drawn by `includes/bar_chart.html`. The fee report
stacks its formats in one bar; the tournament P&L sets its series side by side."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from datetime import date
from decimal import Decimal

from wallets.money.formatting import money

# the frame: room for the scale on the left and the periods below
LEFT, BOTTOM, TOP, HEIGHT, BAR, GAP = 90, 36, 10, 200, 18, 6
PERIOD_LABELS = 10  # at most this many periods named under the bars


def bar_chart(
    periods: Sequence[date],
    values: Mapping[tuple[date, str], Decimal],
    series: Sequence[tuple[str, str]],
    *,
    currency: str,
    stacked: bool,
    label: Callable[[date], str] = lambda day: f"{day:%d %b}",
    title: Callable[[date], str] = lambda day: f"{day:%d %b %Y}",
) -> dict:
    """`values[(period, series name)]`, for `series` [(name, colour)], in `currency`: stacked
    in one bar per period, or one bar per series side by side. Values at or below 0 are not
    drawn."""
    per_slot = 1 if stacked else len(series)
    slot = BAR * per_slot + GAP
    top = max(_heights(periods, values, series, stacked), default=Decimal(0))
    bars = _bars(
        periods, values, series, top=top, slot=slot, stacked=stacked, title=title, currency=currency
    )
    step = max(1, math.ceil(len(periods) / PERIOD_LABELS))
    width = LEFT + max(len(periods) * slot, 100)
    return {
        "bars": bars,
        "width": width,
        "height": TOP + HEIGHT + BOTTOM,
        "left": LEFT,
        "base": TOP + HEIGHT,
        "scale": _scale(top, currency),
        "dates": [
            {"x": LEFT + i * slot + BAR * per_slot / 2, "label": label(period)}
            for i, period in enumerate(periods)
            if i % step == 0
        ],
        "top": top,
        "legend": list(series),
    }


def _scale(top: Decimal, currency: str) -> list[dict]:
    """The ₹ marks on the left: 0, half and the top (0 alone when nothing is drawn)."""
    return [
        {
            "y": round(TOP + HEIGHT * (1 - share), 2),
            "label": money(top * Decimal(share), currency),
        }
        for share in (0, 0.5, 1)
        if top > 0 or share == 0
    ]


def _heights(
    periods: Sequence[date],
    values: Mapping[tuple[date, str], Decimal],
    series: Sequence[tuple[str, str]],
    stacked: bool,
) -> list[Decimal]:
    """Each period's bar height: the sum of its positive values stacked, else its largest."""
    return [
        sum((max(values.get((p, name), Decimal(0)), Decimal(0)) for name, _ in series), Decimal(0))
        if stacked
        else max((values.get((p, name), Decimal(0)) for name, _ in series), default=Decimal(0))
        for p in periods
    ]


def _bars(
    periods: Sequence[date],
    values: Mapping[tuple[date, str], Decimal],
    series: Sequence[tuple[str, str]],
    *,
    top: Decimal,
    slot: int,
    stacked: bool,
    title: Callable[[date], str],
    currency: str,
) -> list[dict]:
    """The rectangles, scaled so that `top` fills the chart's height."""
    bars = []
    for i, period in enumerate(periods):
        y = TOP + HEIGHT
        for n, (name, colour) in enumerate(series):
            value = values.get((period, name), Decimal(0))
            if value <= 0 or top <= 0:
                continue
            h = float(value / top) * HEIGHT
            if stacked:
                y -= h
            bars.append(
                {
                    "x": LEFT + i * slot + (0 if stacked else n * BAR),
                    "y": round(y if stacked else TOP + HEIGHT - h, 2),
                    "h": round(h, 2),
                    "w": BAR,
                    "colour": colour,
                    "title": f"{title(period)} {name}: {money(value, currency)}",
                }
            )
    return bars
