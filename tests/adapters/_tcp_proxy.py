"""A TCP proxy in front of a store's port, for fail-open tests: it counts what reaches the store and can hang.

``TcpProxy(upstream_port)`` listens on a free 127.0.0.1 port and forwards each connection. It counts
``connections`` (attempts, including those the store refused) and ``sends`` (client -> store writes, i.e.
requests); ``hang()`` stops forwarding in both directions without closing anything (a store that is
slow or wedged), ``resume()`` forwards again. Killing the store itself is the server's business.
"""

from __future__ import annotations

import socket
import threading
import time


class TcpProxy:
    def __init__(self, upstream_port: int, upstream_host: str = "127.0.0.1") -> None:
        self.upstream = (upstream_host, upstream_port)
        self.connections = 0
        self.sends = 0
        self._lock = threading.Lock()
        self._flowing = threading.Event()
        self._flowing.set()
        self._closed = False
        self._sockets: list[socket.socket] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True, name="tcp-proxy").start()

    def url(self, postgres_url: str) -> str:
        """``postgres_url`` pointed at this proxy instead of the server."""
        return postgres_url.replace(f":{self.upstream[1]}/", f":{self.port}/")

    def counts(self) -> tuple[int, int]:
        with self._lock:
            return self.connections, self.sends

    def hang(self) -> None:
        self._flowing.clear()

    def resume(self) -> None:
        self._flowing.set()

    def close(self) -> None:
        self._closed = True
        self._flowing.set()
        self._listener.close()
        for sock in list(self._sockets):
            try:
                sock.close()
            except OSError:
                pass

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
            try:
                server = socket.create_connection(self.upstream, timeout=5)
                server.settimeout(None)
            except OSError:  # the store is down: the client sees its connection closed
                client.close()
                continue
            self._sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket, upstream: bool) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                while not self._flowing.wait(0.05):
                    if self._closed:
                        return
                if upstream:
                    with self._lock:
                        self.sends += 1
                target.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, target):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


def wait_until(predicate, timeout: float = 30.0, step: float = 0.05) -> bool:
    """Poll ``predicate`` until true or ``timeout``; its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return bool(predicate())
