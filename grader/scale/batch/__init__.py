"""Batch grading on one host (`grader grade-many`): inputs.py and files.py read a folder or manifest as untrusted
input, grade_many.py ties the batch together (duplicates, resuming, recording, the summary), scheduler.py runs the
compile pool and one runner per GPU or core group."""
