"""A submission's Nsight Compute profile (`grader submit --profile`, grader/profile/), and a benchmark's
dispatch-inclusive time beside its kernel time (PyTorch baselines: the median is CUDA-graph replay, `eager_us`
the same call made from Python, launch gaps included).

Rows stored before this revision have no profile and no eager time (null), as a verdict loaded from old JSON.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

COLUMNS: dict[str, list[sa.Column]] = {
    "submissions": [sa.Column("profile", sa.JSON())],
    "benchmark_results": [sa.Column("eager_us", sa.Float())],
}


def upgrade() -> None:
    for table, columns in COLUMNS.items():
        with op.batch_alter_table(table) as batch:
            for column in columns:
                batch.add_column(column)


def downgrade() -> None:
    for table, columns in COLUMNS.items():
        with op.batch_alter_table(table) as batch:
            for column in columns:
                batch.drop_column(column.name)
