# fedlib — every target sets up .venv first if it is missing.
PY      ?= python3
VENV    ?= .venv
BIN     := $(VENV)/bin
PROFILE ?= auto
CHROMIUM ?= /usr/bin/chromium
export FEDLIB_DATA ?= $(CURDIR)/data
# a relative FEDLIB_DATA (../shared/data) made absolute: kernels start in the notebook's folder
override FEDLIB_DATA := $(abspath $(FEDLIB_DATA))

.PHONY: setup reproduce test test-fast bench lab check-browser clean-venv

$(BIN)/.fedlib-installed: pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.14.1 torchvision==0.29.1
	$(BIN)/python -m pip install -q -e '.[test,ray]'
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $@

setup: $(BIN)/.fedlib-installed

## Reproduce the paper tables into reports/<profile>/ (profile: paper with a GPU, cpu otherwise).
reproduce: setup
	$(BIN)/fedlib reproduce --profile $(PROFILE)

## The whole test suite: unit tests, then every notebook at the smoke profile under nbval.
test: setup
	$(BIN)/python -m pytest -q tests
	FEDLIB_PROFILE=smoke $(BIN)/python -m pytest -q --nbval-lax -p no:cacheprovider notebooks

test-fast: setup
	$(BIN)/python -m pytest -q -x tests -m "not slow"

## JupyterLab in the venv, at the project root, opening the first tutorial.
lab: setup
	$(BIN)/jupyter lab notebooks/tutorials/safl_basics.ipynb

## The tutorials and one notebook per paper opened in JupyterLab in headless Chromium, Run All at smoke:
## fails on an error output, a kernel dialog, a notebook modified by opening, non-widget progress.
## Screenshots: build/browser/. Needs a system Chromium (Debian: apt-get install -y chromium).
check-browser: setup
	$(BIN)/python -m pip install -q playwright
	@test -x $(CHROMIUM) || { echo "check-browser: no Chromium at $(CHROMIUM); on Debian:" \
	  "sudo apt-get update && sudo apt-get install -y chromium (or make check-browser CHROMIUM=path)"; exit 2; }
	FEDLIB_PROFILE=smoke $(BIN)/python tools/check_browser.py --chromium $(CHROMIUM) --out build/browser

bench: setup
	$(BIN)/fedlib bench engine --model fcn --clients 10

clean-venv:
	rm -rf $(VENV)
