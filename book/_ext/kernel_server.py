"""Page kernels forked from one warm process, so that each page pays for its own cells only.

Every executed page gets a fresh kernel, and a fresh ipykernel spends about half a second of CPU importing
IPython, ipykernel and their kin before it runs a cell; a page that draws spends about as much again
importing matplotlib. When a build is about to run two or more pages (``env-before-read-docs``), this
extension starts a server that imports all of that once and then forks a kernel for each page's request.
A forked kernel is still a fresh process with its own globals, started by jupyter_client from the
kernel's command as usual (book/_ext/kernels/python3/launch.py asks the server; without a server the
command is plain ipykernel). Nothing of the book is imported before the fork: the pages import code/
and book/chapter/ themselves. The server stops with the build: when the build process ends, its pipe to
the server closes, and the server kills what it forked and exits.

numpy is imported before any kernel exists, so its BLAS thread count is fixed in the server: one thread
(OPENBLAS_NUM_THREADS=1 and kin, set before the import and passed on to each kernel's environment). The
costs page times numpy with one thread and checks these variables.

Run as a script, this file is the server: ``python kernel_server.py FD FOLDER`` (FD: a listening Unix
socket in FOLDER, which the server removes when it stops).
"""

from __future__ import annotations

import atexit
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
WARM_IMPORTS = (
    "numpy",
    "matplotlib",
    "matplotlib.figure",
    "matplotlib.backends.backend_svg",
    "IPython.core.pylabtools",
    "ipykernel.kernelapp",
    "ipykernel.ipkernel",
)


# -- the server (a separate process) -------------------------------------------------------------------
def _kernel(request: dict, fds: list[int], others: list) -> None:
    """In the forked child: become the kernel that ``request`` asked for; never returns."""
    code = 1
    try:
        for other in others:  # the server's sockets and selector are not the kernel's
            other.close()
        os.setsid()  # as jupyter_client starts a kernel: its own session, out of the terminal's reach
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        os.chdir(request["cwd"])
        # sys.path as ``python -m ipykernel_launcher`` has it: without this script's folder (IPython
        # adds '' before site-packages, as in any kernel).
        sys.path[:] = [
            entry for entry in sys.path if entry != os.path.dirname(os.path.abspath(__file__))
        ]
        os.environ.clear()
        os.environ.update({**request["env"], **ONE_THREAD})
        from ipykernel.kernelapp import IPKernelApp

        # Two settings ipykernel reads from the environment when it is imported (here: in the server).
        argv = [
            *request["argv"],
            *(
                f"--IPKernelApp.{trait}={os.environ[name]}"
                for trait, name in (
                    ("parent_handle", "JPY_PARENT_PID"),
                    ("interrupt", "JPY_INTERRUPT_EVENT"),
                )
                if os.environ.get(name)
            ),
        ]
        sys.argv = ["ipykernel_launcher", *argv]
        IPKernelApp.launch_instance(argv)
        code = 0
    except SystemExit as stop:
        code = 0 if stop.code is None else stop.code if isinstance(stop.code, int) else 1
    except BaseException:  # as a plain kernel would: the reason on its standard error
        traceback.print_exc()
    finally:
        atexit._run_exitfuncs()  # what the kernel's code registered, as at a plain interpreter's exit
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _read_request(conn: socket.socket) -> tuple[dict, list[int]]:
    data = b""
    fds = []
    while not data.endswith(b"\n"):
        chunk, ancillary, _, _ = conn.recvmsg(1 << 16, socket.CMSG_SPACE(3 * 4))
        if not chunk:
            raise ConnectionError("the launcher left before its request was complete")
        data += chunk
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds += list(memoryview(payload).cast("i"))
    return json.loads(data), fds


def serve(listener: socket.socket, folder: str) -> None:
    """Fork kernels until the build ends; then remove the socket's folder (also when the build was
    interrupted and did not get to it)."""
    try:
        _serve(listener)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _serve(listener: socket.socket) -> None:
    signal.signal(
        signal.SIGINT, signal.SIG_IGN
    )  # Ctrl+C stops the build; the build's end stops this
    os.environ.update(ONE_THREAD)
    # The backend ipykernel chooses for a kernel before its cells run (matplotlib reads it on import).
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    for name in WARM_IMPORTS:
        __import__(name)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(sys.stdin.fileno(), selectors.EVENT_READ, "build")
    kernels: dict[socket.socket, int] = {}  # launcher connection -> its kernel's pid
    try:
        while True:
            for key, _ in selector.select(timeout=0.05):
                if key.data == "build":  # the build has ended (its end of the pipe closed)
                    return
                if key.data == "accept":
                    conn, _ = listener.accept()
                    try:
                        request, fds = _read_request(conn)
                    except (
                        OSError,
                        ValueError,
                    ):  # a launcher that died mid-request: nothing to start
                        conn.close()
                        continue
                    pid = os.fork()
                    if pid == 0:
                        _kernel(request, fds, [selector, listener, conn, *kernels])
                    for fd in fds:
                        os.close(fd)
                    kernels[conn] = pid
                    try:
                        conn.sendall(f"started {pid}\n".encode())
                    except OSError:
                        pass
                    selector.register(conn, selectors.EVENT_READ, "launcher")
                    continue
                conn = key.fileobj
                message = conn.recv(4096)
                if message:  # signals for the kernel and what it started, forwarded by its launcher
                    for line in message.decode().split("\n"):
                        if line.startswith("signal "):
                            _signal(kernels[conn], int(line.split()[1]))
                    continue
                selector.unregister(conn)  # the launcher was killed: so is its kernel
                _kill(kernels.pop(conn))
                conn.close()
            while kernels:  # kernels that exited: tell their launchers how
                pid, status = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    break
                for conn, kernel in list(kernels.items()):
                    if kernel == pid:
                        selector.unregister(conn)
                        del kernels[conn]
                        try:
                            conn.sendall(f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
                        except OSError:
                            pass
                        conn.close()
    finally:
        for pid in kernels.values():
            _kill(pid)


def _signal(pid: int, signum: int) -> None:
    """Signal the kernel's process group (it leads one, as a plain kernel does): the kernel and what it started."""
    try:
        os.killpg(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _kill(pid: int) -> None:
    _signal(pid, signal.SIGKILL)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


# -- the Sphinx extension ---------------------------------------------------------------------------------
_SERVER: dict = {}


def _start(app, env, docnames: list[str]) -> None:
    """Start the server if this build runs two pages or more (for one, a plain kernel is as quick)."""
    from read_order import executed

    texts = (Path(env.doc2path(name)).read_text(encoding="utf-8") for name in docnames)
    if _SERVER or app.config.nb_execution_mode == "off" or sum(map(executed, texts)) < 2:
        return
    folder = tempfile.mkdtemp(prefix="book-kernels-")
    path = os.path.join(folder, "socket")
    # Listening before the server has started: a request made while it imports waits in the queue.
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(path)
        listener.listen(16)
    except (
        OSError
    ):  # e.g. a temporary folder whose path is too long for a socket: plain kernels, then
        listener.close()
        shutil.rmtree(folder, ignore_errors=True)
        return
    process = subprocess.Popen(
        [sys.executable, __file__, str(listener.fileno()), folder],
        stdin=subprocess.PIPE,
        pass_fds=[listener.fileno()],
    )
    listener.close()
    _SERVER.update(process=process, folder=folder)
    os.environ["BOOK_KERNEL_SERVER"] = path  # the reading processes and their kernels inherit it


def _stop(app=None, exception=None) -> None:
    process = _SERVER.pop("process", None)
    if process is not None:
        process.stdin.close()
        process.wait()
        os.environ.pop("BOOK_KERNEL_SERVER", None)
        shutil.rmtree(_SERVER.pop("folder"), ignore_errors=True)


def setup(app) -> dict:
    app.connect("env-before-read-docs", _start)
    app.connect("env-updated", lambda app, env: _stop())  # every page has been read and run
    app.connect("build-finished", _stop)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    serve(socket.socket(fileno=int(sys.argv[1])), sys.argv[2])
