"""Profiling a submission with Nsight Compute (`grader profile`, `grader submit --profile`): a diagnostic, never the
score. capture.py runs one call under ncu in the sandbox, parse.py reads ncu's CSV, summary.py and advice.py turn
it into the Profile of model.py, and session.py ties them together; docs/profile.md explains the figures.
"""
