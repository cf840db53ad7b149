"""The rooms: each room a task with one commit path, its seats and names, the pure scheduler of
what happens next, the frames it sends, the hub that holds them, and the ports they talk to. No
socket, web framework or database type enters here (import-linter checks it)."""

__all__: list[str] = []
