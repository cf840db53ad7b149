"""Domeng Online's application layer: the command line now, the game server next."""

__all__: list[str] = []
