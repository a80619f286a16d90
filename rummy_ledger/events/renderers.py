"""Who renders each event type's data: the app that owns the object, with its API output
functions (the `event_renderers` kind of `rummy_ledger/plugins.py`).

A renderer takes the objects the events report, as the service that made the change holds them
in its transaction (the rows as it wrote them), and answers each one's data by its `pk`, several
at once (settlement reports a batch of deals in one go, with nothing read again)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from rummy_ledger.events.event_types import EventType

Render = Callable[[Sequence[Any]], dict[int, dict[str, Any]]]


@dataclass(frozen=True)
class Renderer:
    """`render(subjects)` -> {subject.pk: data} for the events of `types`."""

    types: tuple[EventType, ...]
    render: Render


_RENDERERS: dict[EventType, Render] = {}


def renderer_register(renderer: Renderer) -> None:
    for event_type in renderer.types:
        known = _RENDERERS.get(event_type)
        if known is not None and known.__qualname__ != renderer.render.__qualname__:
            raise ImproperlyConfigured(f"{event_type} has a renderer already: {known}")
        _RENDERERS[event_type] = renderer.render


def renderer_of(event_type: EventType) -> Render:
    try:
        return _RENDERERS[event_type]
    except KeyError:
        raise ImproperlyConfigured(f"no app renders {event_type} events") from None
