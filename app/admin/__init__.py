"""The admin area: sign-in, stored match history, replays, exports, players and live rooms."""

__all__: list[str] = []
