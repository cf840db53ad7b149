"""chat.number: a line's number among its room's lines (1, 2, … across the room's matches), stored
with the line in its insert, so that it has one definition (before: counted after each insert, and
numbered again by row_number() on every read)

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-05 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0017"
down_revision: str | Sequence[str] | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_NUMBERED = """
UPDATE chat SET number = (
    SELECT count(*) FROM chat AS earlier JOIN matches AS theirs ON theirs.id = earlier.match_id
    WHERE theirs.code = (SELECT code FROM matches WHERE matches.id = chat.match_id)
    AND earlier.id <= chat.id
)
"""
"""Each stored line numbered as the reads numbered it until now: by its id among the lines of
its room (the matches that share its code)."""


def upgrade() -> None:
    """Add ``chat.number``, number the lines stored so far as they were read (`_NUMBERED`), then
    make it required and unique within a match (which also indexes a room's next number)."""
    with op.batch_alter_table("chat") as batch:
        batch.add_column(sa.Column("number", sa.Integer(), nullable=True))
    op.execute(_NUMBERED)
    # SQLite alters a column and adds a constraint by rebuilding the table (batch mode)
    with op.batch_alter_table("chat") as batch:
        batch.alter_column("number", existing_type=sa.Integer(), nullable=False)
        batch.create_unique_constraint(op.f("uq_chat_match_id_number"), ["match_id", "number"])


def downgrade() -> None:
    """Drop ``chat.number`` and its constraint (the reads of 0016 number the lines themselves)."""
    with op.batch_alter_table("chat") as batch:
        batch.drop_constraint(op.f("uq_chat_match_id_number"), type_="unique")
        batch.drop_column("number")
