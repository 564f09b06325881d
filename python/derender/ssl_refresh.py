"""`--enable-ssl-refresh`: reload the TLS certificate chain when its key or
certificate file changes, and the CA certificates when that file changes
(vLLM's `SSLCertRefresher`, which watches the same three files)."""

from __future__ import annotations

import os
import ssl
import threading
import time

from derender import logs


class CertRefresher:
    """Polls the files' modification times and reloads `context` in place:
    connections made after a change get the new certificate."""

    def __init__(
        self, context: ssl.SSLContext, key: str, cert: str, ca: str | None, interval: float = 1.0
    ) -> None:
        self.context, self.key, self.cert, self.ca = context, key, cert, ca
        self.interval = interval
        self._seen = self._stamps()

    def start(self) -> None:
        files = [f for f in (self.key, self.cert, self.ca) if f]
        logs.SERVER.info(f"SSLCertRefresher monitors files: {files}")
        threading.Thread(target=self._watch, name="ssl-refresh", daemon=True).start()

    def _stamps(self) -> tuple[float | None, ...]:
        return tuple(_mtime(f) for f in (self.key, self.cert, self.ca))

    def _watch(self) -> None:
        while True:
            time.sleep(self.interval)
            now = self._stamps()
            if now == self._seen:
                continue
            chain_changed = now[:2] != self._seen[:2]
            ca_changed = now[2] != self._seen[2]
            self._seen = now
            try:
                if chain_changed:
                    self.context.load_cert_chain(self.cert, self.key)
                    logs.SERVER.info("Reloading SSL certificate chain")
                if ca_changed and self.ca:
                    self.context.load_verify_locations(self.ca)
                    logs.SERVER.info("Reloading SSL CA certificates")
            except (OSError, ssl.SSLError) as exc:  # a half-written file: the next change retries
                message = f"SSLCertRefresher failed taking action on file change. Error: {exc}"
                logs.SERVER.error(message)


def _mtime(path: str | None) -> float | None:
    if not path:
        return None
    try:
        return os.stat(path).st_mtime_ns / 1e9
    except OSError:
        return None
