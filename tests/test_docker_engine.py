"""Finding the Docker engine (grader/sandbox/docker_engine.py) on a host that has none: with neither DOCKER_HOST
nor the local socket the answer is no, with the reason, before the Docker SDK is imported; with DOCKER_HOST set,
the SDK is asked as before."""

from __future__ import annotations

import json
import os
import subprocess
import sys

ASK = """
import json, sys
from grader.sandbox import choice, docker_engine
docker_engine.LOCAL_SOCKET = sys.argv[1]
version, why = docker_engine.engine()
backend, said = choice.choose("auto", "cpu")
print(json.dumps({"version": version, "why": why, "sandbox": said, "sdk_imported": "docker" in sys.modules}))
"""


def _ask(socket_path: str, docker_host: str | None) -> dict:
    env = {key: value for key, value in os.environ.items() if key != "DOCKER_HOST"}
    if docker_host:
        env["DOCKER_HOST"] = docker_host
    done = subprocess.run(
        [sys.executable, "-c", ASK, socket_path], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_no_docker_host_and_no_socket_is_no_engine_without_importing_the_sdk(tmp_path):
    missing = str(tmp_path / "docker.sock")
    found = _ask(missing, None)
    assert found["version"] is None
    assert found["why"] == f"no Docker engine reachable (DOCKER_HOST is not set and {missing} does not exist)"
    assert found["sandbox"] == f"local sandbox (no container: {found['why']})"
    assert not found["sdk_imported"]


def test_a_docker_host_that_answers_nothing_is_asked_through_the_sdk(tmp_path):
    found = _ask(str(tmp_path / "docker.sock"), "tcp://127.0.0.1:9")
    assert found["version"] is None and found["why"].startswith("no Docker engine reachable (")
    assert "DOCKER_HOST is not set" not in found["why"]
    assert found["sdk_imported"]
