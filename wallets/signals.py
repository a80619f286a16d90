"""What the ledger tells other apps, which it never imports (they connect from their
AppConfig.ready())."""

from django.dispatch import Signal

# Sent by `wallets.services.proposals.proposal_decide`, inside the decision's transaction, when a
# decision changed a proposal's status (deciding the same way again sends nothing).
# sender: the proposal's model; kwargs: `proposal`, `approved` (bool). A receiver that raises
# undoes the decision, so receivers only record what follows from it (a game is `reversed`).
proposal_decided = Signal()
