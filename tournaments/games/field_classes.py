"""Which fields of a finance-edited model may change, and how: a small classification any model
that sets what players pay or win uses (game templates here; tournaments the same way).

- `proposal`: what a player pays or wins depends on it (stakes, fee, rules, the slug game
  servers open it by, seats...): changed only through an approved proposal, never on one
  person's word;
- `cosmetic`: changes nothing a game moves (a name, whether it is offered): edited directly;
- `system`: set by the service (ids, timestamps), never edited.

A field nobody classified is a gap: `unclassified()` names it, and a test fails on it, so a new
field cannot slip through as directly editable.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import models


@dataclass(frozen=True)
class FieldClasses:
    proposal: tuple[str, ...]
    cosmetic: tuple[str, ...]
    system: tuple[str, ...] = ("id",)

    def unclassified(self, model: type[models.Model]) -> list[str]:
        """The model's fields in no class (or in two): each must be classified."""
        names = [f.name for f in model._meta.concrete_fields]
        classes = (*self.proposal, *self.cosmetic, *self.system)
        return [n for n in names if classes.count(n) != 1] + [n for n in classes if n not in names]
