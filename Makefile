# kerneljudge: `make grade PROBLEM=softmax` grades something real, `make test` runs the tests.
# Every target installs what it needs first (make setup), reusing an installed PyTorch.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
GRADER := $(VENV)/bin/grader
WHEELHOUSE ?= wheelhouse
PROBLEM ?= softmax
USER ?= $(shell whoami)
# pip finds everything offline when a wheel folder is there (`make wheelhouse` makes one for GPU nodes).
PIP_SOURCE := $(if $(wildcard $(WHEELHOUSE)/*.whl),--no-index --find-links $(WHEELHOUSE))

.PHONY: setup test test-gpu grade selftest wheelhouse clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv --system-site-packages $(VENV)
	$(PY) -m pip install -q --no-build-isolation $(PIP_SOURCE) -e '.[test]'
	touch $@

test: setup
	$(PY) -m pytest -q

test-gpu: setup
	$(PY) -m pytest -q -m gpu -p no:cacheprovider

grade: setup
	$(GRADER) submit $(PROBLEM) $(or $(FILE),$$($(PY) -m grader.solutions $(PROBLEM))) --user $(USER)

selftest: setup
	$(GRADER) selftest

# Wheels for an air-gapped GPU node (Python 3.12, x86-64): everything the project needs beyond PyTorch.
wheelhouse:
	$(PYTHON) -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
	  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
	  -d $(WHEELHOUSE) pydantic pydantic-core annotated-types typing-inspection typing-extensions \
	  sqlalchemy greenlet alembic mako markupsafe latex2mathml pyyaml
	$(PYTHON) -m pip wheel -q --no-deps --no-build-isolation -w $(WHEELHOUSE) .

clean:
	rm -rf $(VENV) build site *.egg-info
