"""The installed distribution: every subpackage and the Rust engine import under `bufferlab.*`."""

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {
    "compiler": "compiler",
    "switch": "switch/python",
    "controller": "controller",
    "mininet": "mininet",
    "traffic": "traffic",
    "sim": "sim/python",
    "analysis": "analysis",
    "experiments": "experiments",
}


@pytest.mark.parametrize("name", sorted(FOLDERS))
def test_subpackage_imports_from_its_folder(name):
    module = importlib.import_module(f"bufferlab.{name}")
    # A namespace portion's __path__ also names the editable finder's hook entry.
    assert (ROOT / FOLDERS[name]).resolve() in [Path(p).resolve() for p in module.__path__]


def test_rust_engine_is_built_and_loaded():
    from bufferlab.switch import _engine

    assert _engine.version() == "0.1.0"


def test_debian_mininet_is_not_shadowed_from_the_repository_root():
    # `python -c` puts the working directory first on sys.path: our mininet/
    # folder must still lose to Debian's package.
    out = subprocess.run(
        [sys.executable, "-c", "import mininet.net; print(mininet.net.__file__)"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "dist-packages" in out.stdout


def test_every_subpackage_is_listed_for_installation():
    # An unlisted subpackage still imports from an editable install but is missing from a wheel.
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = set()
    for name, folder in config["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((name, *relative)))
    assert found - listed == set()
