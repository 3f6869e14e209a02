"""Start one page kernel: forked by the build's kernel server if there is one, else ipykernel as usual.

This file is the kernel's command in kernel.json; it uses the standard library only and starts in a few
milliseconds. The build's kernel server (book/_ext/kernel_server.py) has IPython, ipykernel, numpy and
matplotlib imported already and forks a kernel for each request, so a page does not pay for those imports.
This process stays, as the kernel's stand-in, for as long as the kernel runs: jupyter_client watches it,
signals it (forwarded to the kernel) and, when it stops the kernel at once, kills it (the server then
kills the kernel). Without a server (BOOK_KERNEL_SERVER unset, or nobody listening) it becomes
``python -m ipykernel_launcher`` with the same arguments.
"""

import array
import json
import os
import signal
import socket
import sys


def plain_kernel() -> None:
    os.execv(sys.executable, [sys.executable, "-m", "ipykernel_launcher", *sys.argv[1:]])


def main() -> None:
    path = os.environ.get("BOOK_KERNEL_SERVER")
    if not path:
        plain_kernel()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.connect(path)
    except OSError:
        plain_kernel()
    request = {"argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}
    # The kernel writes where this process would: its standard streams travel with the request.
    fds = array.array("i", [0, 1, 2])
    server.sendmsg(
        [json.dumps(request).encode() + b"\n"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)]
    )

    def forward(signum, frame) -> None:
        try:
            server.sendall(f"signal {signum}\n".encode())
        except OSError:  # the server has already let go of the kernel
            pass

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, forward)
    reply = b""
    started = False
    while True:
        try:
            data = server.recv(4096)
        except InterruptedError:
            continue
        if not data:  # the server went away: before starting the kernel, start a plain one instead
            if not started:
                plain_kernel()
            sys.exit(1)
        reply += data
        for line in reply.split(b"\n")[:-1]:
            word, _, value = line.decode().partition(" ")
            started = started or word == "started"
            if word == "exit":
                sys.exit(int(value))
        reply = reply.rsplit(b"\n", 1)[-1]


if __name__ == "__main__":
    main()
