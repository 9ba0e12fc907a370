"""What a submission's autotuners chose, as its own report (`autotuned`: kernel, key and config per entry), kept
with the verdict to be shown beside it.

Rows stored before this revision have no report (an empty list), as a verdict loaded from old JSON.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("autotuned", sa.JSON(), nullable=False, server_default="[]"))


def downgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("autotuned")
