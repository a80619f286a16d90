"""The games' refusals and their codes (this app's part of the error-code catalogue). Pure: the
formats raise these without Django."""

from enum import StrEnum

from rummy_ledger.errors import Conflict, DomainError, NotFound, Unprocessable


class GameErrorCode(StrEnum):
    # opening and the game's state
    UNKNOWN_TEMPLATE = "unknown_template"
    TEMPLATE_INVALID = "template_invalid"
    INVALID_PLAYERS = "invalid_players"
    GAME_NOT_FOUND = "game_not_found"
    GAME_EXISTS = "game_exists"
    GAME_NOT_OPEN = "game_not_open"
    GAME_BUSY = "game_busy"
    # a posted deal
    INVALID_DEAL = "invalid_deal"
    DEAL_REJECTED = "deal_rejected"
    DEAL_OUT_OF_ORDER = "deal_out_of_order"
    DEAL_EXISTS = "deal_exists"
    INVALID_CARD = "invalid_card"
    GROUPS_REQUIRED = "groups_required"
    HAND_SIZE = "hand_size"
    TOO_MANY_COPIES = "too_many_copies"
    DROP_NOT_ALLOWED = "drop_not_allowed"
    WINNER_COUNT = "winner_count"
    DECLARATION_MISSING = "declaration_missing"
    INVALID_DECLARATION = "invalid_declaration"
    INVALID_SECOND_DECLARATION = "invalid_second_declaration"
    WRONG_SHOW_VALID = "wrong_show_valid"
    INVALID_MELD = "invalid_meld"
    JOKER_NOT_NAMED = "joker_not_named"  # Rummy 500: a melded joker could be more than one card
    JOKER_FIXED = "joker_fixed"  # Rummy 500: a lay-off needs a melded joker to change its card
    PLAYER_ELIMINATED = "player_eliminated"
    MISSING_PLAYER = "missing_player"
    # rejoin and split
    REJOIN_NOT_ALLOWED = "rejoin_not_allowed"
    NOT_ELIMINATED = "not_eliminated"
    REJOIN_CLOSED = "rejoin_closed"
    SPLIT_NOT_ALLOWED = "split_not_allowed"
    # tournaments
    TOURNAMENT_NOT_FOUND = "tournament_not_found"
    TOURNAMENT_STATE = "tournament_state"
    TOURNAMENT_FULL = "tournament_full"
    REGISTRATION_CLOSED = "registration_closed"
    ALREADY_REGISTERED = "already_registered"
    NOT_REGISTERED = "not_registered"
    REBUY_CLOSED = "rebuy_closed"
    REBUY_LIMIT = "rebuy_limit"
    REBUY_NOT_ALLOWED = "rebuy_not_allowed"
    ROUND_INVALID = "round_invalid"
    ROUND_EXISTS = "round_exists"
    ROUND_REJECTED = "round_rejected"
    # leaderboards
    LEADERBOARD_NOT_FOUND = "leaderboard_not_found"


class TermsInvalid(DomainError):
    """A template's terms that no game can be played by; `field` names the template field."""

    code = GameErrorCode.TEMPLATE_INVALID

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}", details={"field": field})
        self.field = field
        self.reason = message


class OpenRejected(Unprocessable):
    code = GameErrorCode.INVALID_PLAYERS


class GameNotFound(NotFound):
    code = GameErrorCode.GAME_NOT_FOUND


class GameExists(Conflict):
    code = GameErrorCode.GAME_EXISTS


class GameNotOpen(Conflict):
    code = GameErrorCode.GAME_NOT_OPEN


class NotAllowed(Conflict):
    """Something this game's format or state does not allow (rejoin, split); the code says what."""


class DealInvalid(DomainError):
    code = GameErrorCode.INVALID_DEAL


class DealRejected(Unprocessable):
    code = GameErrorCode.DEAL_REJECTED


class DealOutOfOrder(Conflict):
    code = GameErrorCode.DEAL_OUT_OF_ORDER


class DealExists(Conflict):
    code = GameErrorCode.DEAL_EXISTS


class TournamentNotFound(NotFound):
    code = GameErrorCode.TOURNAMENT_NOT_FOUND


class LeaderboardNotFound(NotFound):
    code = GameErrorCode.LEADERBOARD_NOT_FOUND


class TournamentRefused(Conflict):
    """A tournament's state refuses this (full, closed, a rebuy or round out of turn...); the
    code says what."""


class RoundRejected(Unprocessable):
    """Standings the rules refuse: an entrant missing or twice, a table too big, nobody
    qualified, more qualified than the final table seats."""

    code = GameErrorCode.ROUND_REJECTED
