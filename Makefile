# Set-up and the two everyday commands. `make studio` and `make test` each create the virtual
# environment on first use: torch first (the CPU wheel pinned below; any other torch request
# would download gigabytes of CUDA packages), then DemoStudio with every game and extra.

VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: studio test test-all lint bench

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e ".[all,dev]"
	touch $(STAMP)

studio: $(STAMP)
	$(VENV)/bin/demostudio

test: $(STAMP)
	SDL_VIDEODRIVER=dummy SDL_AUDIODRIVER=dummy $(PY) -m pytest -q

test-all: $(STAMP)
	SDL_VIDEODRIVER=dummy SDL_AUDIODRIVER=dummy $(PY) -m pytest -q -m ""

lint: $(STAMP)
	$(VENV)/bin/ruff check --no-cache . && $(VENV)/bin/ruff format --check --no-cache .

bench: $(STAMP)
	SDL_VIDEODRIVER=dummy $(PY) benchmarks/bench_episode.py
