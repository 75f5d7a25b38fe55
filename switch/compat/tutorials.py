"""`make tutorials-install` / `make tutorials-uninstall`: the compat tools where sudo finds them.

    .venv/bin/python switch/compat/tutorials.py install|uninstall|status
        [--bin-dir DIR] [--site-dir DIR]

The p4lang tutorials run their tools through sudo (`sudo PATH=$(PATH) python3
run_exercise.py`, `sudo simple_switch_grpc`), and Debian's sudo looks commands up in its
`secure_path`, not in the caller's PATH, so `.venv/compat/bin` on the PATH is not enough.
`install` makes two kinds of change outside the checkout, and records them in
`.venv/compat/tutorials-installed.json`:

* a symbolic link in `--bin-dir` (default /usr/local/bin: on Debian's secure_path, where a
  BMv2 install puts its tools) to every tool of .venv/compat/bin except `python3`, which
  would shadow Debian's for every user;
* `bufferlab-tutorials.pth` in `--site-dir` (default: the first site-packages directory of
  the Python the venv was made from, /usr/local/lib/python3.11/dist-packages), which makes
  that Python, when run through sudo, import the venv's packages (grpc, p4runtime, `p4.tmp`,
  Scapy, psutil, ptf) ahead of Debian's, as the venv's own Python does. Outside sudo it
  changes nothing.

It refuses (changing nothing) when a file it would write exists and is not its own, so a
real BMv2 or p4c install is never replaced. `uninstall` removes exactly what the record
lists, where it is still what install wrote, and the directories install had to make if
they are empty again. Both are idempotent.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path

VENV = Path(sys.prefix)
COMPAT_BIN = VENV / "compat" / "bin"
RECORD = VENV / "compat" / "tutorials-installed.json"
PTH_NAME = "bufferlab-tutorials.pth"
DEFAULT_BIN_DIR = Path("/usr/local/bin")
#: Left out of --bin-dir: a python3 there would be every user's python3.
NOT_LINKED = {"python3"}


class InstallError(RuntimeError):
    """Why install or uninstall cannot go on (nothing was changed)."""


@dataclass
class Record:
    """What install made outside the checkout, so that uninstall removes exactly that."""

    links: dict[str, str] = field(default_factory=dict)
    pth: str | None = None
    pth_text: str = ""
    made_dirs: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path = RECORD) -> Record | None:
        """The record of an earlier install, or None."""
        if not path.exists():
            return None
        return cls(**json.loads(path.read_text()))

    def save(self, path: Path = RECORD) -> None:
        """Write the record beside the compat tools."""
        path.write_text(json.dumps(self.__dict__, indent=2) + "\n")


def system_site_dir() -> Path:
    """The first site-packages directory of the Python this venv was made from."""
    python = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}"
    out = subprocess.run([str(python), "-c", "import site; print(site.getsitepackages()[0])"],
                         capture_output=True, text=True, check=True).stdout
    return Path(out.strip())


def pth_text(venv_site: str) -> str:
    """The .pth file: under sudo, the venv's site-packages join the path as in the venv."""
    return (f"# bufferlab `make tutorials-install` ({VENV.parent}): Debian's python3 run\n"
            "# through sudo imports the venv's packages, as the venv's python does.\n"
            "# `make tutorials-uninstall` removes this file.\n"
            f"import os, site; 'SUDO_UID' in os.environ and site.addsitedir({venv_site!r})\n")


def tools(compat_bin: Path = COMPAT_BIN) -> list[str]:
    """The compat tools to link: every template `make setup` filled in but python3."""
    if not compat_bin.is_dir():
        raise InstallError(f"{compat_bin} does not exist: run `make setup` first")
    return sorted(p.name for p in compat_bin.iterdir() if p.name not in NOT_LINKED)


def require_writable(directory: Path) -> None:
    """InstallError unless `directory` (or the nearest existing folder above it) is writable."""
    existing = next(d for d in (directory, *directory.parents) if d.exists())
    if not os.access(existing, os.W_OK):
        raise InstallError(f"cannot write {existing}: run it as root"
                           " (sudo make tutorials-install / tutorials-uninstall)")


def is_our_link(path: Path, target: Path) -> bool:
    """Whether `path` is a symbolic link to `target`."""
    return path.is_symlink() and Path(os.readlink(path)) == target


def install(bin_dir: Path, site_dir: Path, compat_bin: Path = COMPAT_BIN,
            record_path: Path = RECORD) -> list[str]:
    """Link the tools and write the .pth; the lines to print. InstallError before any change."""
    venv_site = sysconfig.get_path("purelib")
    wanted = {str(bin_dir / name): str(compat_bin / name) for name in tools(compat_bin)}
    pth = site_dir / PTH_NAME
    text = pth_text(venv_site)
    taken = [link for link, target in wanted.items()
             if os.path.lexists(link) and not is_our_link(Path(link), Path(target))]
    if pth.exists() and pth.read_text() != text:
        taken.append(str(pth))
    if taken:
        raise InstallError("not ours, left alone: " + ", ".join(taken)
                           + " (remove them, or use the tutorials with .venv/compat/bin on"
                             " the PATH and secure_path extended by hand)")
    for directory in (bin_dir, site_dir):
        require_writable(directory)
    record = Record.load(record_path) or Record()
    lines = []
    for directory in (bin_dir, site_dir):
        if not directory.exists():
            directory.mkdir(parents=True)
            record.made_dirs.append(str(directory))
            lines.append(f"made {directory}")
    for link, target in wanted.items():
        if not os.path.lexists(link):
            os.symlink(target, link)
            lines.append(f"linked {link} -> {target}")
        record.links[link] = target
    if not pth.exists():
        pth.write_text(text)
        lines.append(f"wrote {pth} (under sudo, Debian's python3 imports {venv_site})")
    record.pth, record.pth_text = str(pth), text
    record.save(record_path)
    if not lines:
        return [f"already installed; recorded in {record_path}"]
    lines.append(f"recorded in {record_path}; `make tutorials-uninstall` removes all of it")
    return lines


def uninstall(record_path: Path = RECORD) -> list[str]:
    """Remove what the record lists and is still ours; the lines to print."""
    record = Record.load(record_path)
    if record is None:
        return ["nothing to remove: no tutorials install recorded"]
    for directory in {Path(p).parent for p in [*record.links, *filter(None, [record.pth])]}:
        require_writable(directory)
    lines = []
    for link, target in record.links.items():
        if is_our_link(Path(link), Path(target)):
            os.unlink(link)
            lines.append(f"removed {link}")
        elif os.path.lexists(link):
            lines.append(f"left {link}: no longer the link install made")
    if record.pth is not None:
        pth = Path(record.pth)
        if pth.exists() and pth.read_text() == record.pth_text:
            pth.unlink()
            lines.append(f"removed {pth}")
        elif pth.exists():
            lines.append(f"left {pth}: changed since install")
    for directory in map(Path, reversed(record.made_dirs)):
        if directory.is_dir() and not any(directory.iterdir()):
            directory.rmdir()
            lines.append(f"removed {directory}")
    record_path.unlink()
    return lines


def status(record_path: Path = RECORD) -> list[str]:
    """What is installed now, from the record."""
    record = Record.load(record_path)
    if record is None:
        return ["not installed"]
    present = [link for link, target in record.links.items()
               if is_our_link(Path(link), Path(target))]
    return [f"installed: {len(present)} of {len(record.links)} links, "
            f"{record.pth if record.pth and Path(record.pth).exists() else 'no .pth'}",
            *present]


def main(argv: list[str] | None = None) -> int:
    """Entry point; exit status 0, or 1 with the reason on stderr."""
    parser = argparse.ArgumentParser(prog="tutorials.py", description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["install", "uninstall", "status"])
    parser.add_argument("--bin-dir", type=Path, default=DEFAULT_BIN_DIR,
                        help="where the tools' links go (default %(default)s)")
    parser.add_argument("--site-dir", type=Path, default=None,
                        help="where the .pth goes (default: the system Python's first"
                             " site-packages directory)")
    args = parser.parse_args(argv)
    try:
        if args.action == "install":
            lines = install(args.bin_dir, args.site_dir or system_site_dir())
        elif args.action == "uninstall":
            lines = uninstall()
        else:
            lines = status()
    except (InstallError, OSError) as err:
        print(f"tutorials-{args.action}: error: {err}", file=sys.stderr)
        return 1
    print("\n".join(f"tutorials-{args.action}: {line}" for line in lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
