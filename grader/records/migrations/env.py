"""Alembic environment: runs on the connection grader.records.storage hands over in `config.attributes`.

A new revision, after changing grader/records/schema.py (autogenerate compares a database at the current head with it;
read and edit what it writes into versions/):

    from alembic import command
    from grader.records import storage
    with storage.engine("sqlite:////tmp/kerneljudge-revision.db").begin() as connection:
        command.revision(storage.alembic_config(connection), "what changed", autogenerate=True)
"""

from alembic import context

from grader.records.schema import metadata

connection = context.config.attributes["connection"]
context.configure(
    connection=connection, target_metadata=metadata, render_as_batch=connection.dialect.name == "sqlite"
)  # SQLite alters tables by copying them
with context.begin_transaction():
    context.run_migrations()
