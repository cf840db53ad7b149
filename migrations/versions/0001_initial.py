"""initial: matches, seats, rounds, actions, tallies

Revision ID: 0001
Revises:
Create Date: 2026-11-30 10:15:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _utc() -> sa.DateTime:
    # app.store.models.UTCDateTime stores through this type; a migration does not import the models
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    """Create the tables of app/db/models.py as of this revision."""
    op.create_table(
        "matches",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("code", sa.String(length=32), nullable=False),
        sa.Column("variant", sa.String(length=16), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("seat_count", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("turn_timer_s", sa.Float(), nullable=False),
        sa.Column("start", sa.JSON(), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_at", _utc(), nullable=False),
        sa.Column("started_at", _utc(), nullable=True),
        sa.Column("finished_at", _utc(), nullable=True),
        sa.Column("host_token_hash", sa.String(length=128), nullable=False),
        sa.CheckConstraint(
            "status IN ('waiting', 'playing', 'finished', 'abandoned')", name=op.f("ck_matches_status")
        ),
        sa.CheckConstraint("seat_count > 0", name=op.f("ck_matches_seat_count")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_matches")),
    )
    op.create_index(op.f("ix_matches_code"), "matches", ["code"], unique=True)
    op.create_index(op.f("ix_matches_status"), "matches", ["status"], unique=False)

    op.create_table(
        "seats",
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=True),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("bot_level", sa.String(length=16), nullable=True),
        sa.Column("token_hash", sa.String(length=128), nullable=True),
        sa.Column("updated_at", _utc(), nullable=False),
        sa.CheckConstraint("kind IN ('empty', 'human', 'bot')", name=op.f("ck_seats_kind")),
        sa.CheckConstraint("seat >= 0", name=op.f("ck_seats_seat")),
        sa.ForeignKeyConstraint(
            ["match_id"], ["matches.id"], name=op.f("fk_seats_match_id_matches"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("match_id", "seat", name=op.f("pk_seats")),
    )

    op.create_table(
        "rounds",
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("index", sa.Integer(), nullable=False),
        sa.Column("seed", sa.String(length=128), nullable=False),
        sa.Column("commitment", sa.String(length=64), nullable=False),
        sa.Column("deal", sa.JSON(), nullable=False),
        sa.Column("started_at", _utc(), nullable=False),
        sa.Column("ended_at", _utc(), nullable=True),
        sa.Column("outcome", sa.JSON(), nullable=True),
        sa.Column("table_after", sa.Integer(), nullable=True),
        sa.CheckConstraint('"index" >= 0', name=op.f("ck_rounds_index")),
        sa.ForeignKeyConstraint(
            ["match_id"], ["matches.id"], name=op.f("fk_rounds_match_id_matches"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("match_id", "index", name=op.f("pk_rounds")),
    )

    op.create_table(
        "actions",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("round_index", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("action", sa.JSON(), nullable=False),
        sa.Column("actor", sa.String(length=8), nullable=False),
        sa.Column("created_at", _utc(), nullable=False),
        sa.CheckConstraint("actor IN ('human', 'bot', 'timer', 'server')", name=op.f("ck_actions_actor")),
        sa.CheckConstraint("seq >= 0", name=op.f("ck_actions_seq")),
        sa.ForeignKeyConstraint(
            ["match_id", "round_index"],
            ["rounds.match_id", "rounds.index"],
            name=op.f("fk_actions_match_id_round_index_rounds"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_actions")),
        sa.UniqueConstraint(
            "match_id", "round_index", "seq", name=op.f("uq_actions_match_id_round_index_seq")
        ),
    )

    op.create_table(
        "tallies",
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("round_index", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("stones", sa.Integer(), nullable=True),
        sa.Column("received", sa.Integer(), nullable=False),
        sa.Column("paid", sa.Integer(), nullable=False),
        sa.Column("points", sa.Integer(), nullable=True),
        sa.Column("pending", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["match_id", "round_index"],
            ["rounds.match_id", "rounds.index"],
            name=op.f("fk_tallies_match_id_round_index_rounds"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("match_id", "round_index", "seat", name=op.f("pk_tallies")),
    )


def downgrade() -> None:
    """Drop every table of this revision (and all stored matches with them)."""
    op.drop_table("tallies")
    op.drop_table("actions")
    op.drop_table("rounds")
    op.drop_table("seats")
    op.drop_index(op.f("ix_matches_status"), table_name="matches")
    op.drop_index(op.f("ix_matches_code"), table_name="matches")
    op.drop_table("matches")
