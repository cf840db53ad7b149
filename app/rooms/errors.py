"""A refused room command."""

from __future__ import annotations

__all__ = ["RoomError"]


class RoomError(Exception):
    """A refused command: ``code`` is stable, ``status`` the HTTP status it maps to, ``headers``
    any the HTTP answer carries (``Retry-After``)."""

    def __init__(
        self, code: str, message: str, status: int = 409, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.headers = headers or {}
