"""What a settlement's transfers are chained with (wallets/chain/): the stored deal that caused
each, its hands (the posted results) and points, so a deal changed after it moved money shows
in the ledger's chain, named."""

from __future__ import annotations

from collections.abc import Collection

from tournaments.models import Deal, DealTransfer, Game
from wallets.chain.witnesses import Witness, WitnessProvider


def deal_witnesses(transfer_ids: Collection[int]) -> dict[int, Witness]:
    """{transfer id: its deal} for the transfers a deal's settlement posted. Three look-ups by
    key (links, deals, games), each by its index: a join would let the planner, expecting a
    deal for every transfer, scan every deal and game for each batch."""
    links = dict(
        DealTransfer.objects.filter(transfer_id__in=list(transfer_ids))
        .order_by()
        .values_list("transfer_id", "deal_id")
    )
    deals = {
        deal[0]: deal
        for deal in Deal.objects.filter(pk__in=set(links.values()))
        .order_by()
        .values_list("pk", "deal_no", "game_id", "results", "points")
    }
    games = dict(
        Game.objects.filter(pk__in={deal[2] for deal in deals.values()})
        .order_by()
        .values_list("pk", "game_id")
    )
    found = {}
    for transfer_id, deal_id in links.items():
        if deal_id not in deals:  # deleted: named, and its content no longer what was chained
            found[transfer_id] = Witness(f"deal {deal_id} (gone)", {"deal": deal_id})
            continue
        _, deal_no, game_pk, results, points = deals[deal_id]
        found[transfer_id] = Witness(
            name=f"deal {deal_id} (game {games.get(game_pk)}, deal {deal_no})",
            content={
                "deal": deal_id,
                "game": game_pk,
                "deal_no": deal_no,
                "hands": results,
                "points": points,
            },
        )
    return found


DEAL_WITNESSES = WitnessProvider("deal", deal_witnesses)
