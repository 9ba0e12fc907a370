"""The database tables that keep every graded submission, the grading jobs of the workers, and the web judge's
accounts, sessions, API tokens and verdict signatures (grader/web/; SQLAlchemy Core).

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
    false,
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
    Column("autotuned", JSON, nullable=False, server_default="[]"),  # the submission's own autotuning report, shown
    Column("public", Boolean, nullable=False, server_default=false()),  # the web judge shows it to everyone
    Column("hidden_reason", Text),  # set by an admin: left off the leaderboards, and why
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
    Column("bound_us", Float),  # GPU tracks: the judge's clock, the median of the supervisor's own times
)

grading_jobs = Table(  # one row per job sent to the Celery workers (grader/scale/distributed/job_table.py)
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
    Column("source_sha256", String(64)),  # duplicate-submission detection (grader/web/quotas.py)
    Column("stage", String(16)),  # what the embedded worker is doing: compile, run, check
    Index("ix_grading_jobs_queue_state", "queue", "state"),
    Index("ix_grading_jobs_user", "user", "enqueued_at"),
)

users = Table(  # the web judge's accounts (grader/web/accounts.py)
    "users",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(64), nullable=False, unique=True),  # = submissions.user of their submissions
    Column("password_hash", String(200), nullable=False),  # argon2id; "" : cannot log in with a password
    Column("is_admin", Boolean, nullable=False, server_default=false()),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

api_tokens = Table(  # shown once when made; only their sha256 is kept
    "api_tokens",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("user_id", Integer, ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("label", String(100), nullable=False),
    Column("token_sha256", String(64), nullable=False, unique=True),
    Column("prefix", String(16), nullable=False),  # the token's first characters, to tell tokens apart
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("last_used_at", DateTime(timezone=True)),
    Column("revoked_at", DateTime(timezone=True)),
)

web_sessions = Table(  # a browser's login; the cookie holds the token, the table its sha256
    "web_sessions",
    metadata,
    Column("token_sha256", String(64), primary_key=True),
    Column("user_id", Integer, ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
)

verdict_signatures = Table(  # the judge's Ed25519 signature of a stored verdict (grader/web/signing.py)
    "verdict_signatures",
    metadata,
    Column("submission_id", String(64), primary_key=True),
    Column("key_id", String(64), nullable=False),
    Column("document", Text, nullable=False),  # the signed document: verdict and attestation, canonical JSON
    Column("signature", String(200), nullable=False),  # base64
    Column("signed_at", DateTime(timezone=True), nullable=False),
)
