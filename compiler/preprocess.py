"""Run the system C preprocessor over a P4 source the way p4c does.

p4c invokes `cpp -C -undef -nostdinc -x assembler-with-cpp` with its
`p4include/` directory on the include path and defines `__TARGET_BMV2__`
for the bmv2 back end (bf-p4c: `__TARGET_TOFINO__=1` or `2`) plus its own
version macros; programs test these to pick code paths, so we define the same
names, the target's as its architecture module says. Our `p4include/`
(core.p4, v1model.p4, tna.p4, t2na.p4 and theirs) comes first on the include
path, then the user's `-I` dirs.
The output keeps `# line "file"` markers, which the lexer maps back so every
position names the original file and line.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from .diagnostics import CompileError, SourcePos

P4INCLUDE = Path(__file__).resolve().parent / "p4include"

# The p4c release whose behaviour bufferlab-p4c mirrors.
P4C_VERSION = (1, 2, 5)

# The back end's target macro (v1model's, unless the architecture says otherwise).
TARGET_DEFINES: tuple[str, ...] = ("__TARGET_BMV2__",)

VERSION_DEFINES: tuple[str, ...] = (
    "__p4c__",
    f"__p4c_major__={P4C_VERSION[0]}",
    f"__p4c_minor__={P4C_VERSION[1]}",
    f"__p4c_patchlevel__={P4C_VERSION[2]}",
    f'__p4c_version__="{".".join(map(str, P4C_VERSION))}"',
)


def preprocessor_command(
    path: str | Path,
    include_dirs: Iterable[str | Path] = (),
    defines: Iterable[str] = (),
    target_defines: Iterable[str] = TARGET_DEFINES,
) -> list[str]:
    """The cpp command line for `path` (`defines` are `NAME` or `NAME=VALUE`)."""
    cpp = shutil.which("cpp") or "cpp"
    cmd = [cpp, "-C", "-undef", "-nostdinc", "-x", "assembler-with-cpp"]
    cmd += [f"-D{d}" for d in (*target_defines, *VERSION_DEFINES, *defines)]
    cmd += [f"-I{d}" for d in (P4INCLUDE, *include_dirs)]
    cmd.append(str(path))
    return cmd


def preprocess(
    path: str | Path,
    include_dirs: Iterable[str | Path] = (),
    defines: Iterable[str] = (),
    target_defines: Iterable[str] = TARGET_DEFINES,
) -> str:
    """Preprocess one P4 file; cpp's own diagnostics become a `CompileError`."""
    path = Path(path)
    if not path.is_file():
        raise CompileError(None, f"{path}: no such file")
    cmd = preprocessor_command(path, include_dirs, defines, target_defines)
    try:
        # Bytes that are not UTF-8 become U+FFFD: harmless in comments, a located lexer error elsewhere.
        proc = subprocess.run(
            cmd, capture_output=True, text=True, encoding="utf-8", errors="replace", check=False
        )
    except OSError as exc:
        raise CompileError(None, f"cannot run the C preprocessor ({cmd[0]}): {exc}") from exc
    if proc.returncode != 0:
        raise _cpp_error(proc.stderr, path)
    return proc.stdout


def _cpp_error(stderr: str, path: Path) -> CompileError:
    """Turn cpp's first `file:line:col: error: msg` into a located CompileError."""
    for line in stderr.splitlines():
        parts = line.split(":", 4)
        if len(parts) == 5 and parts[3].strip() in ("error", "fatal error"):
            file, lineno, col, _, message = parts
            if lineno.isdigit() and col.isdigit():
                return CompileError(SourcePos(file, int(lineno), int(col)), message.strip())
    text = stderr.strip() or "the C preprocessor failed"
    return CompileError(SourcePos(str(path), 1, 1), text.splitlines()[0])
