"""A benchmark's time by the supervisor's own clock beside the worker's (`bound_us`, GPU tracks: the lower
quartile of its per-call bounds), so a stored verdict keeps what the judge measured without the worker.

Rows stored before this revision have no such time (null), as a verdict loaded from old JSON.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("benchmark_results") as batch:
        batch.add_column(sa.Column("bound_us", sa.Float()))


def downgrade() -> None:
    with op.batch_alter_table("benchmark_results") as batch:
        batch.drop_column("bound_us")
