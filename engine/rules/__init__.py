"""The variants' rules: each module holds only what differs from the shared core."""

__all__: list[str] = []
