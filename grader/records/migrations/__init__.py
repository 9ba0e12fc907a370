"""Alembic migrations of the kerneljudge database; grader.records.storage runs them programmatically at first use."""
