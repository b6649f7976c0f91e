"""Runs the interop scripts in forked children of one Python process that has already
imported PyIceberg, so that each run does not import it again (about 1.1 s of processor
time per run; the integration tests run this directory's scripts ~600 times).

Usage: forkserver.py SOCKET. Binds a Unix socket at SOCKET, prints "ready", and serves
until its stdin ends (the test process that started it exited), then removes SOCKET and
its directory (when empty).

Each connection is one run. The client sends one JSON line:
    {"script": PATH, "args": [...], "env": {NAME: VALUE}, "stdout": PATH, "stderr": PATH}
and the server forks. The child adds `env` to its environment, opens the two output files
on its descriptors 1 and 2, reads nothing (descriptor 0 is /dev/null), runs PATH as
`__main__` with `sys.argv` = [PATH, *args] and PATH's directory first on `sys.path`, as
`python PATH ARGS...` does, then writes its exit status (decimal) to the connection and
exits with it.

Only PyIceberg is imported before the fork: pyarrow and duckdb start native threads when
imported, and a process that forks should have none. PyIceberg reads its `PYICEBERG_*`
environment when imported, so such variables cannot be given per run (python_runs.rs
refuses them). A child that dies without writing its status (a signal, `os._exit`) is
reported by the client as such.
"""

import atexit
import json
import os
import runpy
import select
import signal
import socket
import sys
import threading
import traceback

import pyiceberg.catalog.sql  # noqa: F401  (the import the scripts share)
import pyiceberg.table  # noqa: F401


def exit_status(code):
    """The status `python` exits with for `sys.exit(code)`."""
    if code is None:
        return 0
    if isinstance(code, int):  # True and False too
        return int(code) & 0xFF
    print(code, file=sys.stderr)
    return 1


def run(conn):
    """In the child: run one request of `conn`; never returns."""
    code = 1
    try:
        request = json.loads(conn.makefile("rb").readline())
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
            target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(target, fd)
            os.close(target)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.environ.update(request.get("env", {}))
        script = request["script"]
        sys.argv = [script, *request["args"]]
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
        try:
            runpy.run_path(os.path.abspath(script), run_name="__main__")
            code = 0
        except SystemExit as e:
            code = exit_status(e.code)
        except KeyboardInterrupt:
            traceback.print_exc()
            code = 130
        except BaseException:
            traceback.print_exc()
            code = 1
        # what the interpreter does before it exits: stop the thread pools and wait for
        # the script's other threads (concurrent.futures registers its workers' stop
        # there), then run its atexit handlers
        threading._shutdown()
        atexit._run_exitfuncs()
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
        try:
            conn.sendall(str(code).encode())
            conn.close()
        except BaseException:
            pass
        os._exit(code)


def main():
    path = sys.argv[1]
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(64)
    # children are reaped by the system; each reports its status over its connection
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    print("ready", flush=True)
    try:
        while True:
            readable, _, _ = select.select([server, sys.stdin], [], [])
            if sys.stdin in readable and not os.read(sys.stdin.fileno(), 4096):
                break
            if server in readable:
                conn, _ = server.accept()
                if os.fork() == 0:
                    server.close()
                    run(conn)
                conn.close()
    finally:
        server.close()
        for remove in (os.unlink, os.rmdir):
            try:
                remove(path)
            except OSError:
                pass
            path = os.path.dirname(path)


if __name__ == "__main__":
    main()
