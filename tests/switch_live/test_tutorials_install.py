"""switch/compat/tutorials.py (`make tutorials-install` / `tutorials-uninstall`) in scratch
folders: what install links and writes, that it refuses files that are not its own without
changing anything, that it is idempotent, and that uninstall removes exactly what the record
lists and is still install's (and the folders install made)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "switch" / "compat" / "tutorials.py"
TOOLS = ["p4c", "p4c-bm2-ss", "ptf", "simple_switch", "simple_switch_CLI", "simple_switch_grpc"]


@pytest.fixture
def tutorials():
    spec = importlib.util.spec_from_file_location("compat_tutorials_under_test", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def layout(tmp_path):
    compat = tmp_path / "venv" / "compat" / "bin"
    compat.mkdir(parents=True)
    for name in [*TOOLS, "python3"]:
        (compat / name).write_text("#!/bin/sh\n")
    return {"compat_bin": compat, "record_path": tmp_path / "venv" / "compat" / "record.json",
            "bin_dir": tmp_path / "usr" / "local" / "bin", "site_dir": tmp_path / "site"}


def install(tutorials, layout):
    return tutorials.install(layout["bin_dir"], layout["site_dir"], layout["compat_bin"],
                             layout["record_path"])


def test_install_links_every_tool_but_python3_and_writes_a_sudo_only_pth(tutorials, layout):
    lines = install(tutorials, layout)
    bin_dir = layout["bin_dir"]
    assert sorted(p.name for p in bin_dir.iterdir()) == TOOLS
    for name in TOOLS:
        assert os.readlink(bin_dir / name) == str(layout["compat_bin"] / name)
    assert f"made {bin_dir}" in lines
    pth = layout["site_dir"] / "bufferlab-tutorials.pth"
    venv_site = next(line for line in pth.read_text().splitlines() if line.startswith("import"))
    assert "'SUDO_UID' in os.environ and site.addsitedir(" in venv_site
    # The .pth line as Python's site module runs it: only under sudo does the path grow.
    probe = ("import sys; " + venv_site.replace("site.addsitedir", "sys.path.append")
             + "; print(sys.path[-1])")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUDO_")}
    plain = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    sudo = subprocess.run([sys.executable, "-c", probe], env={**env, "SUDO_UID": "0"},
                          capture_output=True, text=True)
    assert sudo.stdout.strip().endswith("site-packages") and sudo.stdout != plain.stdout


def test_install_refuses_files_that_are_not_its_own_and_changes_nothing(tutorials, layout):
    layout["bin_dir"].mkdir(parents=True)
    real = layout["bin_dir"] / "simple_switch_grpc"
    real.write_text("BMv2's own\n")
    with pytest.raises(tutorials.InstallError, match="simple_switch_grpc"):
        install(tutorials, layout)
    assert [p.name for p in layout["bin_dir"].iterdir()] == ["simple_switch_grpc"]
    assert real.read_text() == "BMv2's own\n"
    assert not layout["site_dir"].exists() and not layout["record_path"].exists()


def test_install_twice_then_uninstall_leaves_nothing(tutorials, layout):
    install(tutorials, layout)
    again = install(tutorials, layout)
    assert again == [f"already installed; recorded in {layout['record_path']}"]
    lines = tutorials.uninstall(layout["record_path"])
    assert f"removed {layout['site_dir'] / 'bufferlab-tutorials.pth'}" in lines
    assert not layout["bin_dir"].exists() and not layout["site_dir"].exists()
    assert not layout["record_path"].exists()
    assert tutorials.uninstall(layout["record_path"]) == [
        "nothing to remove: no tutorials install recorded"]


def test_uninstall_leaves_what_changed_since_install(tutorials, layout):
    install(tutorials, layout)
    replaced = layout["bin_dir"] / "p4c"
    replaced.unlink()
    replaced.write_text("a real p4c installed later\n")
    (layout["bin_dir"] / "unrelated").write_text("someone else's\n")
    lines = tutorials.uninstall(layout["record_path"])
    assert f"left {replaced}: no longer the link install made" in lines
    assert sorted(p.name for p in layout["bin_dir"].iterdir()) == ["p4c", "unrelated"]

