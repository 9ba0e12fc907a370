"""The verdict: its statuses, its record (tests, benchmarks, score), SOL figures and how its times are shown.

The lowest layer above settings: the judge makes verdicts, storage keeps them, the site and the CLI show them,
and none of those need the judge itself to read one.
"""
