"""accelconf's language server (``accelconf lsp``): protocol glue over the accelconf library.

:mod:`accelconf_lsp.server` holds the pygls server and its handlers; :mod:`accelconf_lsp.protocol`
turns accelconf's findings, completion candidates, hover text and symbols into protocol types.
Editor logic without protocol types lives in :mod:`accelconf.assist`.
"""

from __future__ import annotations

__all__ = ["main"]


def main(tcp: bool = False, host: str = "127.0.0.1", port: int = 2087) -> int:
    """Run the server on stdio, or on TCP with ``tcp=True``."""
    from accelconf_lsp.server import main as run

    return run(tcp=tcp, host=host, port=port)
