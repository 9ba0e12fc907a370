"""The database tables that keep every graded submission, and the grading jobs of the workers (SQLAlchemy Core).

Alembic revisions in grader/records/migrations/versions/ create and change these tables; a change here needs a new
revision (`tests/test_storage.py` checks that the migrated schema matches these definitions).
"""

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    true,
)

metadata = MetaData()

submissions = Table(
    "submissions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("submission_id", String(64), nullable=False, unique=True),  # the public id a verdict carries
    Column("user", String(200), nullable=False),
    Column("problem", String(100), nullable=False),
    Column("track", String(16), nullable=False),
    Column("mode", String(16), nullable=False),  # "test" or "submit"
    Column("status", String(32), nullable=False),
    Column("message", Text, nullable=False),
    Column("score_us", Float),
    Column("source", Text, nullable=False),
    Column("source_sha256", String(64), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),  # UTC
    Column("device_name", String(200), nullable=False),
    Column("device_driver", String(100), nullable=False),
    Column("device", JSON, nullable=False),  # the whole device record
    Column("toolchain", JSON, nullable=False),
    Column("stages_s", JSON, nullable=False),
    Column("grader_version", String(32), nullable=False),
    Column("output_tail", Text, nullable=False, server_default=""),  # what the run printed, bounded
    Column("time_limit_s", Float),  # the wall-clock limit the run had
    Column("profile", JSON),  # grader/profile's Profile of one benchmark call (submit --profile), else null
    Index("ix_submissions_board", "problem", "device_name", "status", "mode"),
    Index("ix_submissions_user", "user"),
)

test_results = Table(
    "test_results",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("submission", Integer, ForeignKey("submissions.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("position", Integer, nullable=False),
    Column("name", String(100), nullable=False),
    Column("sizes", JSON, nullable=False),
    Column("status", String(32), nullable=False),
    Column("max_abs_err", Float),
    Column("max_rel_err", Float),
    Column("message", Text, nullable=False),
    Column("unwritten", Integer, nullable=False, server_default="0"),  # elements left as the judge's poison
    Column("nan", Integer, nullable=False, server_default="0"),
    Column("inf", Integer, nullable=False, server_default="0"),
)

benchmark_results = Table(
    "benchmark_results",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("submission", Integer, ForeignKey("submissions.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("position", Integer, nullable=False),
    Column("name", String(100), nullable=False),
    Column("sizes", JSON, nullable=False),
    Column("median_us", Float, nullable=False),
    Column("spread", JSON, nullable=False),
    Column("samples", Integer, nullable=False),
    Column("mode", String(32), nullable=False),
    Column("gflops", Float, nullable=False),
    Column("gbps", Float, nullable=False),
    Column("fraction_of_peak", JSON, nullable=False),
    Column("floor_us", Float, nullable=False),
    Column("overhead_us", Float, nullable=False),
    Column("telemetry", JSON, nullable=False),
    Column("trusted", Boolean, nullable=False, server_default=true()),  # False: a flag says why not
    Column("flags", JSON, nullable=False, server_default="[]"),
    Column("eager_us", Float),  # PyTorch baselines: the call timed from Python, dispatch gaps included
)

grading_jobs = Table(  # one row per job sent to the Celery workers (grader/scale/job_table.py)
    "grading_jobs",
    metadata,
    Column("job_id", String(64), primary_key=True),  # = the verdict's submission_id
    Column("queue", String(64), nullable=False),
    Column("problem", String(100), nullable=False),
    Column("track", String(16), nullable=False),
    Column("mode", String(16), nullable=False),
    Column("user", String(200), nullable=False),
    Column("filename", String(300), nullable=False),
    Column("state", String(16), nullable=False),  # queued, running, done, failed
    Column("attempts", Integer, nullable=False),  # how many times a worker started it
    Column("worker", String(200), nullable=False),  # the last worker that started or finished it
    Column("status", String(32)),  # the verdict's status, once done
    Column("submission", Integer),  # the submissions row, once done
    Column("error", Text),  # why it failed (a grader failure, not a verdict)
    Column("payload", Text),  # the job as JSON, to send it again if lost
    Column("enqueued_at", DateTime(timezone=True)),
    Column("started_at", DateTime(timezone=True)),
    Column("finished_at", DateTime(timezone=True)),
    Index("ix_grading_jobs_queue_state", "queue", "state"),
)
