"""Initial schema: submissions with their per-test and per-benchmark results.

Revision ID: 0001
Revises:
Create Date: 2026-11-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "submissions",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("submission_id", sa.String(64), nullable=False, unique=True),
        sa.Column("user", sa.String(200), nullable=False),
        sa.Column("problem", sa.String(100), nullable=False),
        sa.Column("track", sa.String(16), nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("score_us", sa.Float()),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("source_sha256", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("device_name", sa.String(200), nullable=False),
        sa.Column("device_driver", sa.String(100), nullable=False),
        sa.Column("device", sa.JSON(), nullable=False),
        sa.Column("toolchain", sa.JSON(), nullable=False),
        sa.Column("stages_s", sa.JSON(), nullable=False),
        sa.Column("grader_version", sa.String(32), nullable=False),
    )
    op.create_index("ix_submissions_board", "submissions", ["problem", "device_name", "status", "mode"])
    op.create_index("ix_submissions_user", "submissions", ["user"])
    op.create_table(
        "test_results",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("submission", sa.Integer(), sa.ForeignKey("submissions.id", ondelete="CASCADE"), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("sizes", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("max_abs_err", sa.Float()),
        sa.Column("max_rel_err", sa.Float()),
        sa.Column("message", sa.Text(), nullable=False),
    )
    op.create_index("ix_test_results_submission", "test_results", ["submission"])
    op.create_table(
        "benchmark_results",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("submission", sa.Integer(), sa.ForeignKey("submissions.id", ondelete="CASCADE"), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("sizes", sa.JSON(), nullable=False),
        sa.Column("median_us", sa.Float(), nullable=False),
        sa.Column("spread", sa.JSON(), nullable=False),
        sa.Column("samples", sa.Integer(), nullable=False),
        sa.Column("mode", sa.String(32), nullable=False),
        sa.Column("gflops", sa.Float(), nullable=False),
        sa.Column("gbps", sa.Float(), nullable=False),
        sa.Column("fraction_of_peak", sa.JSON(), nullable=False),
        sa.Column("floor_us", sa.Float(), nullable=False),
        sa.Column("overhead_us", sa.Float(), nullable=False),
        sa.Column("telemetry", sa.JSON(), nullable=False),
    )
    op.create_index("ix_benchmark_results_submission", "benchmark_results", ["submission"])


def downgrade() -> None:
    op.drop_table("benchmark_results")
    op.drop_table("test_results")
    op.drop_table("submissions")
