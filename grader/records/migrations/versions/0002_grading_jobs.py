"""The grading_jobs table of the Celery workers, until now made outside the migrations (create_all).

A database that a worker of an earlier version used already has the table, made from the same definition:
it is kept as it is, rows included, and only its index is added if missing.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

INDEX = "ix_grading_jobs_queue_state"


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    if "grading_jobs" in inspector.get_table_names():
        if INDEX not in {index["name"] for index in inspector.get_indexes("grading_jobs")}:
            op.create_index(INDEX, "grading_jobs", ["queue", "state"])
        return
    op.create_table(
        "grading_jobs",
        sa.Column("job_id", sa.String(64), primary_key=True),
        sa.Column("queue", sa.String(64), nullable=False),
        sa.Column("problem", sa.String(100), nullable=False),
        sa.Column("track", sa.String(16), nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("user", sa.String(200), nullable=False),
        sa.Column("filename", sa.String(300), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("worker", sa.String(200), nullable=False),
        sa.Column("status", sa.String(32)),
        sa.Column("submission", sa.Integer()),
        sa.Column("error", sa.Text()),
        sa.Column("payload", sa.Text()),
        sa.Column("enqueued_at", sa.DateTime(timezone=True)),
        sa.Column("started_at", sa.DateTime(timezone=True)),
        sa.Column("finished_at", sa.DateTime(timezone=True)),
    )
    op.create_index(INDEX, "grading_jobs", ["queue", "state"])


def downgrade() -> None:
    op.drop_table("grading_jobs")
