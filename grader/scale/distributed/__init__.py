"""Distributed grading across hosts (Celery, Redis, a shared database; docs/deploy.md): celery_app.py (settings and
sending), tasks.py (the grading task), client.py (enqueue and wait), job_table.py (the grading_jobs rows),
broker.py, sweeper.py (jobs the broker lost), monitor.py (`queue status`) and workers.py (starting workers)."""
