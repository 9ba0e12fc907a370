"""Alembic migrations of the kerneljudge database; grader.storage runs them programmatically at first use."""
