"""Leaderboards: points that a client's settled games earn their players over a period (IST
days), and prizes from promotions paid to the best at its end. The settlement job adds a
batch's points in one statement (`services/points.py`); the end pays in one ledger call
(`services/payout.py`); creation is maker-checker or `manage.py create_leaderboard`
(`services/setup.py`); `GET /api/v1/leaderboards/{slug}` shows the standings (`api/`)."""
