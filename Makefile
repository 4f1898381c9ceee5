# make demo: set up, serve the bundled demo site, crawl it, analyse it, show the top suggestions.
# make test: set up and run the whole test suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test clean

install: $(STAMP)

$(STAMP): requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check torch==2.13.0
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@echo "compiling the analysis's loops once (numba caches them beside the code: ~20 s here, not on the first analysis)"
	$(BIN)/python bench/analyze.py stages --pages 400 > /dev/null
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python demo/run.py

test: $(STAMP)
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) demo-output .pytest_cache
