"""A private mount namespace for disk faults the kernel makes for real: a tmpfs of a fixed size
that fills up, a log directory remounted read-only.

    with MountNamespace() as namespace:
        namespace.mount_tmpfs(log_dir, "8m")
        broker = BrokerProcess(..., command=namespace.command([sys.executable, "-m", "pykbroker"]))
        namespace.remount_read_only(log_dir)

A sleeping process holds the namespace (`unshare -m`, mounts private: nothing leaks to the
machine); its mounts live as long as it does, so that a broker can be stopped and started again
on the same tmpfs. Commands run in it through `nsenter`; the test reads its files through
`/proc/<holder>/root` (`host_path`). Needs root, as CI has.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from ..ci import skip_or_fail_in_ci


def skip_without_namespaces() -> None:
    """Skip (fail in CI) where mount namespaces cannot be made."""
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("nsenter"):
        skip_or_fail_in_ci("mount namespaces need root, unshare and nsenter")


class MountNamespace:
    def __init__(self) -> None:
        self.holder = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sleep", "infinity"],
                                       stdin=subprocess.DEVNULL)
        self._wait_until_entered()

    def _wait_until_entered(self) -> None:
        """`unshare` has made the namespace once the holder's differs from ours."""
        ours = os.readlink("/proc/self/ns/mnt")
        for _ in range(500):
            try:
                if os.readlink(f"/proc/{self.holder.pid}/ns/mnt") != ours:
                    return
            except OSError:
                pass
            if self.holder.poll() is not None:
                raise RuntimeError(f"unshare -m failed (exit {self.holder.returncode})")
            subprocess.run(["sleep", "0.01"])
        raise RuntimeError("unshare -m did not make a mount namespace")

    def command(self, args: list[str]) -> list[str]:
        """`args` run inside the namespace."""
        return ["nsenter", "-t", str(self.holder.pid), "-m", "--", *args]

    def run(self, *args: str) -> None:
        subprocess.run(self.command(list(args)), check=True, capture_output=True, timeout=30)

    def mount_tmpfs(self, path: str | os.PathLike[str], size: str) -> None:
        Path(path).mkdir(parents=True, exist_ok=True)
        self.run("mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path))

    def remount_read_only(self, path: str | os.PathLike[str]) -> None:
        """Make `path` read-only for every file opened from now on. A file system with files open
        for writing cannot be remounted read-only as a whole (EBUSY), so a bind mount of it is
        laid over it and that one is remounted: new files, renames and checkpoints get EROFS,
        as on a file system the kernel turned read-only."""
        self.run("mount", "--bind", str(path), str(path))
        self.run("mount", "-o", "remount,bind,ro", str(path))

    def host_path(self, path: str | os.PathLike[str]) -> Path:
        """Where the test reads `path` as the namespace sees it."""
        return Path(f"/proc/{self.holder.pid}/root") / Path(path).relative_to("/")

    def close(self) -> None:
        self.holder.kill()
        self.holder.wait()

    def __enter__(self) -> MountNamespace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
