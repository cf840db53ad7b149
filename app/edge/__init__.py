"""The socket edge: the room WebSocket endpoint, connections (an `app.rooms.ports.Outbox` over a
WebSocket), the protocol's messages, parsing a frame once into an engine action, and close codes."""

__all__: list[str] = []
