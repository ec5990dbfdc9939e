"""accelconf's language server (``accelconf lsp``): protocol glue over the accelconf library.

:mod:`accelconf_lsp.server` holds the pygls server and its handlers; :mod:`accelconf_lsp.protocol`
turns accelconf's findings, completion candidates, hover text and symbols into protocol types.
Editor logic without protocol types lives in :mod:`accelconf.assist`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

__all__ = ["DESCRIPTION", "add_arguments", "cli_main", "main"]

DESCRIPTION = (
    "Run the accelconf language server: diagnostics, completion, hover, quick fixes, formatting "
    "and document symbols for accelerate config files (YAML/JSON) and DeepSpeed JSON. Speaks LSP on "
    "stdin/stdout unless --tcp is given. Settings (section `accelconf`): accelerateVersion, target, "
    "disabledRules. Set ACCELCONF_LSP_LOG=DEBUG for a log on stderr."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The server's options, for ``accelconf lsp`` and ``python -m accelconf_lsp`` alike."""
    p.add_argument(
        "--stdio",
        action="store_true",
        help="speak LSP on stdin/stdout (the default; accepted for editors that pass it)",
    )
    p.add_argument("--tcp", action="store_true", help="listen on a TCP port instead of stdio")
    p.add_argument("--host", default="127.0.0.1", help="TCP host (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=2087, help="TCP port (default: 2087)")


def cli_main(argv: Sequence[str] | None = None) -> int:
    """``python -m accelconf_lsp [--tcp ...]``."""
    parser = argparse.ArgumentParser(prog="python -m accelconf_lsp", description=DESCRIPTION)
    add_arguments(parser)
    args = parser.parse_args(argv)
    return main(tcp=bool(args.tcp), host=args.host, port=args.port)


def main(tcp: bool = False, host: str = "127.0.0.1", port: int = 2087) -> int:
    """Run the server on stdio, or on TCP with ``tcp=True``."""
    from accelconf_lsp.server import main as run

    return run(tcp=tcp, host=host, port=port)
