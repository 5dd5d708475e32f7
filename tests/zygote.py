"""A fork server for the tests' ``cosim`` commands that must not run in the test's own process.

A pytest-xdist worker is a threaded process (execnet's receiver thread, and Dask's IO loop once a test has used Dask)
whose descriptors include its channel to the controller: a process pool forked from it inherits both, and a child
forked while another thread holds a lock it needs never returns.  Commands that start processes of their own
(``explore``, ``--workers N``, ``--scheduler``) therefore run in a child forked from this server: a Python started
once per worker, single-threaded, that imported ``cosim.cli`` and the ``preload`` modules and then only forks.  Each
child is where a new ``python -I -m cosim.cli`` would stand after its imports, so it costs a fork, not the 0.4-1 CPU s
of a new Python's imports.

The server reads one JSON request per line: the command line, the files for the child's stdout and stderr (stdout
None: /dev/null), a side file where the child writes its peak memory (the kernel's VmHWM: rusage's ru_maxrss would
count the server's) and, if asked, the modules it imported, its working folder, its whole environment, and module
attributes to set first (``{"cosim.dse.sweep": {"CONNECT_S": 2.0}}``).  It answers with the child's pid, then its wait
status and CPU time (wait4: the child's own rusage).  A child still running at the caller's deadline is killed with
its process group (everything it started), so no command can hang a test.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

_SERVER = """\
import importlib, json, os, sys, threading, time, traceback
t0 = time.perf_counter()
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # what cosim.cli.main sets before numpy loads
from cosim.cli import main
for name in json.loads(sys.argv[1]):
    try:
        importlib.import_module(name)
    except BaseException:
        pass
import resource
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps([usage.ru_utime + usage.ru_stime, time.perf_counter() - t0]), flush=True)
assert threading.active_count() == 1, threading.enumerate()  # a fork is safe only from a lone Python thread
for line in sys.stdin:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        os.setsid()  # its own process group: the deadline kills what it started too
        os.dup2(os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
        os.dup2(os.open(request["stdout"] or os.devnull, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 1)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        code = 1
        try:
            if request["env"] is not None:
                os.environ.clear()
                os.environ.update(request["env"])
            if request["cwd"]:
                os.chdir(request["cwd"])
            for module, values in request["patches"].items():
                for attribute, value in values.items():
                    setattr(importlib.import_module(module), attribute, value)
            sys.argv = ["-c", *request["argv"]]  # as a new Python's ``python -c SCRIPT ARGV`` has it
            code = main(request["argv"])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if not isinstance(exc.code, int | None):
                print(exc.code, file=sys.stderr)
        except BaseException:
            traceback.print_exc()
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except BaseException:
                    pass
            hwm = open("/proc/self/status").read().split("VmHWM:")[1].split()[0]
            modules = [m for m in sys.modules if m != "__main__"] if request["modules"] else None
            with open(request["side"], "w") as f:
                json.dump({"peak_kib": int(hwm), "modules": modules}, f)
            os._exit((code or 0) & 0xFF)
    print(pid, flush=True)
    _, status, usage = os.wait4(pid, 0)
    print(json.dumps([status, usage.ru_utime + usage.ru_stime]), flush=True)
"""


@dataclass(frozen=True)
class Finished:
    """What a child did."""

    exit_code: int  # -N for a signal, as subprocess gives it
    stdout: str
    stderr: str
    wall_s: float  # [s], the server's start-up added: what a new Python would take
    cpu_s: float  # [s], user + sys, likewise
    peak_mib: float  # [MiB], the child's VmHWM
    modules: list[str] | None  # the names it imported, when asked
    killed: bool  # it ran past the deadline


class Zygote:
    """One fork server per set of preloaded modules in this process, kept for the process's life."""

    _servers: dict[tuple[str, ...], Zygote] = {}

    def __init__(self, preload: tuple[str, ...]):
        self.folder = Path(tempfile.mkdtemp(prefix="cosim-zygote-"))
        # binary and unbuffered: the deadline is a select() on the descriptor, which a buffered reader's read-ahead
        # would hide an answer from
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-c", _SERVER, json.dumps(list(preload))], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
        )
        self._pending = b""
        self.startup_cpu_s, self.startup_wall_s = json.loads(self._line(time.monotonic() + 300))
        self.count = 0

    @classmethod
    def get(cls, preload: tuple[str, ...] = ()) -> Zygote:
        if preload not in cls._servers or cls._servers[preload].process.poll() is not None:
            if not cls._servers:
                atexit.register(cls.close_all)
            elif preload in cls._servers:  # ended (killed after an interrupted run): its files go with it
                shutil.rmtree(cls._servers[preload].folder, ignore_errors=True)
            cls._servers[preload] = cls(preload)
        return cls._servers[preload]

    def run(
        self,
        argv: list,
        *,
        timeout_s: float,
        capture_stdout: bool = True,
        cwd: Path | str | None = None,
        env: dict[str, str] | None = None,
        patches: dict[str, dict] | None = None,
        modules: bool = False,
    ) -> Finished:
        """``cosim ARGV`` in a forked child; ``env``: its whole environment (None: the server's)."""
        self.count += 1
        files = {k: self.folder / f"{k}-{self.count}" for k in ("stdout", "stderr", "side")}
        request = {
            "argv": [str(a) for a in argv],
            "stdout": str(files["stdout"]) if capture_stdout else None,
            "stderr": str(files["stderr"]),
            "side": str(files["side"]),
            "cwd": str(cwd) if cwd is not None else None,
            "env": env,
            "patches": patches or {},
            "modules": modules,
        }
        t0 = time.perf_counter()
        deadline = time.monotonic() + timeout_s
        pid, killed = None, False
        try:
            self.process.stdin.write((json.dumps(request) + "\n").encode())
            pid = int(self._line(deadline))
            try:
                answer = self._line(deadline)
            except TimeoutError:
                killed = True
                with contextlib.suppress(ProcessLookupError):  # it may end as the deadline passes
                    os.killpg(pid, signal.SIGKILL)  # the child and all it started; the server's wait4 then returns
                answer = self._line(time.monotonic() + 60)
        except BaseException:  # interrupted (Ctrl-C, pytest-timeout) or the server broke: nothing of it is left
            if pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
            self.process.kill()
            self.process.wait()
            raise
        status, cpu_s = json.loads(answer)
        side = json.loads(files["side"].read_text()) if files["side"].exists() else {"peak_kib": float("nan"), "modules": None}
        texts = {k: files[k].read_bytes().decode(errors="replace") if files[k].exists() else "" for k in ("stdout", "stderr")}
        for path in files.values():
            path.unlink(missing_ok=True)
        return Finished(
            exit_code=os.waitstatus_to_exitcode(status),
            stdout=texts["stdout"],
            stderr=texts["stderr"],
            wall_s=time.perf_counter() - t0 + self.startup_wall_s,
            cpu_s=cpu_s + self.startup_cpu_s,
            peak_mib=side["peak_kib"] / 1024,
            modules=side["modules"],
            killed=killed,
        )

    def _line(self, deadline: float) -> str:
        """The server's next answer line, or TimeoutError at ``deadline`` (time.monotonic)."""
        fd = self.process.stdout.fileno()
        while b"\n" not in self._pending:
            if not select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
                raise TimeoutError
            chunk = os.read(fd, 65536)
            if not chunk:
                raise RuntimeError(f"the tests' cosim fork server ended (exit status {self.process.wait()})")
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line.decode()

    @classmethod
    def close_all(cls) -> None:
        for server in cls._servers.values():
            server.process.stdin.close()
            try:
                server.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.process.kill()
            shutil.rmtree(server.folder, ignore_errors=True)
        cls._servers.clear()
