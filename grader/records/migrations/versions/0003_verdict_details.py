"""What a verdict says beyond pass or fail: the run's printed output and time limit, each wrong test's counts of
never-written, NaN and Inf elements, and whether each timing can be trusted (with the flags that say why not).

Rows stored before this revision get the defaults a verdict loaded from old JSON gets: no output, no limit,
zero counts, trusted timings with no flags.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

COLUMNS: dict[str, list[sa.Column]] = {
    "submissions": [
        sa.Column("output_tail", sa.Text(), nullable=False, server_default=""),
        sa.Column("time_limit_s", sa.Float()),
    ],
    "test_results": [
        sa.Column(name, sa.Integer(), nullable=False, server_default="0") for name in ("unwritten", "nan", "inf")
    ],
    "benchmark_results": [
        sa.Column("trusted", sa.Boolean(), nullable=False, server_default=sa.true()),
        sa.Column("flags", sa.JSON(), nullable=False, server_default="[]"),
    ],
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
