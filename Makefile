# kerneljudge: `make grade PROBLEM=softmax` grades something real, `make test` runs the tests; `make help` lists
# the rest. Every target installs what it needs first (make setup), reusing an installed PyTorch.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
GRADER := $(VENV)/bin/grader
PROBLEM ?= softmax
USER ?= $(shell whoami)
# The extras setup installs: every one pyproject.toml defines (the names in [project.optional-dependencies]) but
# those in EXTRAS_OMIT: the Python tracks' frameworks (1.3 GB, and useless without a GPU) unless asked for, as
# `make setup EXTRAS_OMIT=` does on a GPU machine (PyTorch's CUDA wheels bring Triton with them already).
EXTRAS_OMIT ?= triton cupy
EXTRAS ?= $(shell awk -v omit=" $(EXTRAS_OMIT) " '/^\[/ { t = ($$0 == "[project.optional-dependencies]") } \
  t && /^[A-Za-z0-9_.-]+ *=/ { sub(/ *=.*/, ""); if (index(omit, " " $$0 " ")) next; printf "%s%s", s, $$0; s = "," }' pyproject.toml)
# A wheel folder made by `make wheelhouse` for a machine with no network. setup installs from it alone (pip's
# --no-index) when it holds wheels made for this Python (its file python-version says which, else the tags of its
# wheels), else from the index.
WHEELHOUSE ?= wheelhouse
WHEELHOUSE_PY ?= 3.12
wheelhouse_python = $(or $(shell cat $(WHEELHOUSE)/python-version 2> /dev/null),$(shell ls $(WHEELHOUSE) 2> /dev/null | sed -n 's/.*-cp3\([0-9]*\)-cp3[0-9]*-.*/3.\1/p' | head -1))
python_version = $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])')
PIP_SOURCE = $(if $(wildcard $(WHEELHOUSE)/*.whl),$(if $(filter-out $(python_version),$(wheelhouse_python)),,--no-index --find-links $(WHEELHOUSE)))

.PHONY: help setup test test-fast lint test-gpu gpu-check grade selftest wheelhouse offline-bundle clean bench-solutions \
  validate-timing site serve
.DEFAULT_GOAL := setup

help: ## this list
	@awk -F ':.*## ' '/^[A-Za-z0-9_-]+:.*## / { printf "  make %-16s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)
	@echo "Variables: PROBLEM FILE USER (grade), PYTHON (the interpreter setup builds on), VENV, WHEELHOUSE, WHEELHOUSE_PY,"
	@echo "  REPORT STEPS PROBLEMS BUDGET FIXTURE_BUDGET SHARD (gpu-check), BUNDLE DOCKER_DEBS (offline-bundle)."

setup: $(VENV)/.installed ## the venv (.venv): the project (editable) with every extra; runs first for every target

# The venv has its own pip, bootstrapped by the venv module (ensurepip; Debian and Ubuntu package it as
# python3-venv) and upgraded from the index or the wheelhouse, so nothing depends on $(PYTHON)'s pip, setuptools or
# wheel. It also sees the packages of $(PYTHON): a .pth file lists its site-packages (which works even when
# $(PYTHON) is itself a venv, as on GPU images), so an installed PyTorch is reused, never downloaded again.
$(VENV)/.created:
	$(PYTHON) -m venv $(VENV)
	$(PYTHON) -c "import site; print('\n'.join(site.getsitepackages()))" \
	  > "$$($(PY) -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")/kerneljudge-parent.pth"
	@echo "setup: $(if $(PIP_SOURCE),offline from $(WHEELHOUSE)/ (pip --no-index),$(if $(wildcard $(WHEELHOUSE)/*.whl),$(WHEELHOUSE)/ holds wheels for Python $(wheelhouse_python) and this is $(python_version): )from the index)"
	$(PY) -m pip install -q --disable-pip-version-check $(PIP_SOURCE) --upgrade pip
	touch $@

# The project itself, with build isolation: pip takes the build backend ([build-system] in pyproject.toml) from the
# index or the wheelhouse into a throwaway environment, never from the venv or $(PYTHON). Then `grader prepare`
# builds the harness of each track this machine runs and measures its devices' ceilings, so that a first grading
# pays for neither; a step that fails is said and left to that grading.
$(VENV)/.installed: pyproject.toml $(VENV)/.created
	$(PY) -m pip install -q --disable-pip-version-check $(PIP_SOURCE) -e '.[$(EXTRAS)]'
	$(GRADER) prepare || echo "setup: a step of 'grader prepare' failed (above); a first grading tries it again"
	touch $@

test: setup ## the test suite (GPU tests skip themselves where no GPU is visible)
	$(PY) -m pytest -q

test-fast: setup ## the suite without the slow tests (full-ladder gradings, the adversarial suite, containers, services)
	$(PY) -m pytest -q -m "not slow"

lint: setup ## ruff (lint and format check) and mypy, as CI runs them
	$(PY) -m ruff check grader harness tests
	$(PY) -m ruff format --check grader harness tests
	$(PY) -m mypy

test-gpu: setup ## the GPU half of the suite
	$(PY) -m pytest -q -m gpu -p no:cacheprovider

# A GPU host's acceptance check (docs/deploy.md, "Checking a GPU host"): the steps in STEPS (default: all of
# them, in order: doctor tests-adversarial tests-timing tests-rest selftest validate-timing profile container),
# selftest and validate-timing over PROBLEMS (default: all), the whole run within BUDGET seconds if given; a summary
# and one log per step in REPORT, each step's line written as it ends. Run it in parts into the same REPORT where
# one run must be short, e.g. STEPS="doctor tests-adversarial", then STEPS=tests-timing, then STEPS=tests-rest,
# then the rest; SHARD=K/N runs part K (from 0) of N of the test steps' tests.
gpu-check: setup ## GPU host: GPU tests, selftest, validate-timing, profile, container; a report in REPORT
	@test -n "$(REPORT)" || { echo 'usage: make gpu-check REPORT=folder [STEPS="doctor tests-adversarial ..."] [PROBLEMS="softmax ..."] [BUDGET=seconds] [SHARD=K/N]' >&2; exit 2; }
	$(PY) scripts/gpu_check.py --report "$(REPORT)" $(if $(STEPS),--steps "$(STEPS)") \
	  $(if $(PROBLEMS),--problems "$(PROBLEMS)") $(if $(BUDGET),--budget $(BUDGET)) $(if $(FIXTURE_BUDGET),--fixture-budget $(FIXTURE_BUDGET)) \
	  $(if $(SHARD),--shard $(SHARD))

grade: setup ## grade FILE (default: the best reference solution of PROBLEM for this machine) as USER
	$(GRADER) submit $(PROBLEM) $(or $(FILE),--reference) --user $(USER)

selftest: setup ## every reference rung accepted, every null answer rejected
	$(GRADER) selftest

# Wheels for `make setup` on a machine with no network, by default the GPU node's Python (WHEELHOUSE_PY, x86-64
# manylinux): pip, the build backend and everything pyproject.toml asks for (its dependencies and every extra),
# read from pyproject.toml so that nothing added there is forgotten here. Left out (WHEELHOUSE_OMIT): PyTorch (with
# its CUDA libraries, several GB) and numpy and matplotlib (39 MB with what they need, beside the 48 MB of the rest
# for Python 3.12): the GPU node's Python has all three, and the wheelhouse travels with the repo within 64 MiB.
# A Python without them installs them from elsewhere first. Triton and CuPy (the Python tracks' extras, 1.3 GB) are
# left out too: PyTorch's CUDA wheels bring Triton, and CuPy is installed where a GPU is. pip reads the
# dependencies' markers for the Python that runs it, so run this on one no newer than WHEELHOUSE_PY.
WHEELHOUSE_OMIT ?= torch numpy matplotlib triton cupy-cuda13x
WHEELHOUSE_PLATFORMS ?= manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_26_x86_64 manylinux_2_24_x86_64 \
  manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux_2_12_x86_64 manylinux2010_x86_64 manylinux_2_5_x86_64 manylinux1_x86_64
define WHEELHOUSE_REQUIREMENTS
import re, sys
try:
    import tomllib
except ModuleNotFoundError:
    sys.exit("make wheelhouse reads pyproject.toml with tomllib: it needs Python >= 3.11")
project = tomllib.load(open("pyproject.toml", "rb"))
wanted = project["build-system"]["requires"] + ["wheel", "pip"] + project["project"]["dependencies"]
wanted += [r for extra in project["project"].get("optional-dependencies", {}).values() for r in extra]
omit = {name.lower() for name in sys.argv[1:]}
print("\n".join(r for r in wanted if re.split(r"[\s\[<>=!~;(@]", r, maxsplit=1)[0].lower() not in omit))
endef
export WHEELHOUSE_REQUIREMENTS

wheelhouse: $(VENV)/.created ## wheels for an offline `make setup` (Python WHEELHOUSE_PY, x86-64), in WHEELHOUSE
	rm -rf $(WHEELHOUSE).part && mkdir -p $(WHEELHOUSE).part
	$(PY) -c "$$WHEELHOUSE_REQUIREMENTS" $(WHEELHOUSE_OMIT) > $(WHEELHOUSE).part/requirements.txt
	$(PY) -m pip download -q --disable-pip-version-check --only-binary=:all: --implementation cp \
	  --python-version $(WHEELHOUSE_PY) $(addprefix --platform ,$(WHEELHOUSE_PLATFORMS)) \
	  -d $(WHEELHOUSE).part -r $(WHEELHOUSE).part/requirements.txt
	echo $(WHEELHOUSE_PY) > $(WHEELHOUSE).part/python-version
	rm -rf $(WHEELHOUSE) && mv $(WHEELHOUSE).part $(WHEELHOUSE)
	@echo "$(WHEELHOUSE)/: $$(ls $(WHEELHOUSE)/*.whl | wc -l) wheels for Python $(WHEELHOUSE_PY), $$(du -sh $(WHEELHOUSE) | cut -f1); left out: $(WHEELHOUSE_OMIT)"

# One tarball for a GPU host with no network (docs/deploy.md, "An offline GPU host"): the repository at HEAD (git
# archive), the wheelhouse (made first if missing) and, with DOCKER_DEBS=1, the Docker engine's packages (make
# debs, on a machine of the GPU host's distribution and release). Its scripts/offline_install.sh sets it up there.
BUNDLE ?= build/kerneljudge-offline.tar.gz
offline-bundle: $(VENV)/.created ## one tarball for a GPU host with no network: repo, wheelhouse[, Docker's .debs]
	[ -s $(WHEELHOUSE)/python-version ] || $(MAKE) --no-print-directory wheelhouse
	$(if $(DOCKER_DEBS),$(MAKE) --no-print-directory debs)
	bash scripts/offline_bundle.sh "$(BUNDLE)" "$(WHEELHOUSE)" $(if $(DOCKER_DEBS),"$(DEBS)")

clean: ## remove the venv and the build outputs
	rm -rf $(VENV) build site *.egg-info $(WHEELHOUSE).part

bench-solutions: setup ## GPU: every rung of every ladder next to PyTorch, stored
	$(GRADER) bench-solutions

validate-timing: setup ## GPU: the timer checked against do_bench and ncu
	$(GRADER) validate-timing

site: setup ## the static site from the results database, in build/site
	$(GRADER) render --out build/site

serve: setup ## the web judge on http://127.0.0.1:8000/ (docs/web.md; `grader serve --static`: the rendered site)
	$(GRADER) serve

include docker.mk
