"""Grading many submissions with the one judge: jobs.py (a job, run and recorded once), topology.py and lifetime.py
are shared by the three ways in, one subpackage each: warm/ (`grader warm`), batch/ (`grader grade-many`) and
distributed/ (Celery workers across hosts). The three never import one another (tests/test_architecture.py)."""
