"""The one hashing helper: hex SHA-256 of a string (seat tokens, deal commitments)."""

from __future__ import annotations

import hashlib

__all__ = ["commitment_of", "sha256_hex"]


def sha256_hex(text: str) -> str:
    """The hex SHA-256 (64 lowercase hex digits) of ``text``'s UTF-8 bytes.

    >>> sha256_hex("abc")[:16]
    'ba7816bf8f01cfea'
    """
    return hashlib.sha256(text.encode()).hexdigest()


def commitment_of(seed: str) -> str:
    """A deal's commitment (RECORD.md ``commitment``): `sha256_hex` of its seed, published before
    the round is played and checked once the seed is revealed.

    >>> commitment_of("abc") == sha256_hex("abc")
    True
    """
    return sha256_hex(seed)
