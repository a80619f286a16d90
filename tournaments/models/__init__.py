"""Every model of the app, where Django (and the migrations) look for them: the games'
(`tournaments/games/models.py`: templates, games, seats, deals, fee days) and the tournaments'
(`tournaments/tournaments/models.py`). Each keeps the app label `tournaments` and its table."""

from tournaments.games.models import (
    MONEY_TERMS,
    SEATS_MAX,
    SEATS_MIN,
    TEMPLATE_FIELDS,
    Currency,
    Deal,
    DealTransfer,
    FeeDay,
    Format,
    Game,
    GamePlayer,
    GameTemplate,
    SplitPolicy,
    TemplateChange,
    default_entry_buckets,
)
from tournaments.tournaments.models import (
    NewTournament,
    Rebuy,
    Registration,
    Tournament,
    TournamentChange,
    TournamentEscrow,
    TournamentPrize,
    TournamentRound,
    TournamentSeat,
)

__all__ = [
    "MONEY_TERMS",
    "SEATS_MAX",
    "SEATS_MIN",
    "TEMPLATE_FIELDS",
    "Currency",
    "Deal",
    "DealTransfer",
    "FeeDay",
    "Format",
    "Game",
    "GamePlayer",
    "GameTemplate",
    "NewTournament",
    "Rebuy",
    "Registration",
    "SplitPolicy",
    "TemplateChange",
    "Tournament",
    "TournamentChange",
    "TournamentEscrow",
    "TournamentPrize",
    "TournamentRound",
    "TournamentSeat",
    "default_entry_buckets",
]
