"""A spectator's identity in a room, so the host can mute one spectator's chat: a secret key the
server gives the spectator's browser (which keeps it and sends it back in its next ``hello``) and
the public tag derived from it, which chat lines and the host's rules carry.

The tag is a hash of the room's secret salt (its host token's hash, which only the server holds),
its code and the key: it says nothing of the key, differs from room to room for the same browser,
and is the same on every server process (nothing to share but the rules, which are stored). The salt
is what keeps a tag from being forged: with the code and the key alone, which a client knows, 8 hex
digits (32 bits) are found for any tag seen in the chat in minutes (a GPU: seconds), and a key whose
tag is another spectator's writes as them, spends their chat allowance, and gets them muted with it.
Without the salt the search has nothing to test a guess against but the room itself. A spectator
who throws the key away (a private window, cleared storage) comes back as a new one: the host can
still let no spectator write.

What the host's mute of a person holds on, beyond their tag, is their client address
(`app.addresses.counted_address`), kept only as `client_hash`: salted with the room's secret host
token hash, so the same address is another hash in every room, a stored hash cannot be looked up
in a table of addresses made for another room, and no client ever gets one."""

from __future__ import annotations

import re
import secrets
from typing import Final

from engine.hashing import sha256_hex

__all__ = [
    "KEY_PATTERN",
    "TAG_PATTERN",
    "client_hash",
    "is_tag",
    "new_watcher_key",
    "watcher_of",
    "watcher_tag",
]

KEY_PATTERN: Final = r"^[A-Za-z0-9_-]{16,64}$"
"""A spectator's key as a ``hello`` may carry it (what `new_watcher_key` makes: URL-safe base64)."""
TAG_PATTERN: Final = r"^[0-9a-f]{8}$"
"""A spectator's public tag: 8 lowercase hex digits."""


def new_watcher_key() -> str:
    """A fresh secret key for a spectator: 24 URL-safe characters (144 random bits)."""
    return secrets.token_urlsafe(18)


def watcher_tag(salt: str, code: str, key: str) -> str:
    """The public tag of the spectator holding ``key`` in room ``code``: 8 hex digits of SHA-256
    over the room's ``salt`` (its host token's hash: never sent to a client), the code and the key.

    >>> watcher_tag("s1", "q3N0", "k" * 24) == watcher_tag("s1", "q3N0", "k" * 24)
    True
    >>> watcher_tag("s1", "q3N0", "k" * 24) != watcher_tag("s1", "other", "k" * 24)
    True
    >>> watcher_tag("s1", "q3N0", "k" * 24) != watcher_tag("s2", "q3N0", "k" * 24)
    True
    """
    return sha256_hex(f"tag:{salt}:{code}:{key}")[:8]


def client_hash(salt: str, address: str) -> str:
    """What a room knows of a client ``address`` (as `app.addresses.counted_address` gives it):
    16 hex digits of SHA-256 over the room's ``salt`` (its host token's hash, which only the
    server holds, the same on every process and for each of the room's matches) and the address.

    >>> client_hash("s1", "192.0.2.7") == client_hash("s1", "192.0.2.7") != client_hash("s2", "192.0.2.7")
    True
    """
    return sha256_hex(f"client:{salt}:{address}")[:16]


def watcher_of(salt: str, code: str, key: str | None) -> tuple[str, str]:
    """A spectator's key and tag (`watcher_tag`, with the room's ``salt``) in room ``code``: the
    key it sent back (``key``, when well formed) or a new one."""
    if key is None or not re.fullmatch(KEY_PATTERN, key):
        key = new_watcher_key()
    return key, watcher_tag(salt, code, key)


def is_tag(text: str) -> bool:
    """Whether ``text`` is a spectator's tag in form (`TAG_PATTERN`)."""
    return re.fullmatch(TAG_PATTERN, text) is not None
