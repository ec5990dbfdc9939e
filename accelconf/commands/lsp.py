"""``accelconf lsp``: run the language server on stdio, or on a TCP port with ``--tcp``.

Only gathers options; the server lives in the ``accelconf_lsp`` package (``lsp/accelconf_lsp``),
imported when the command runs so that other commands never pay for pygls.
"""

from __future__ import annotations

import argparse
from typing import Sequence


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:  # type: ignore[no-untyped-def]
    from accelconf.commands import help_texts

    p = subparsers.add_parser(name, help=help_text, **help_texts(
        DESCRIPTION,
        [("accelconf lsp", "stdio, what editors start"),
         ("accelconf lsp --tcp --port 2087", "for debugging"),
         ("ACCELCONF_LSP_LOG=DEBUG accelconf lsp", "a log on stderr")],
        "0 the client shut the server down, 2 bad arguments",
        extra="editor set-up: the VS Code extension and Neovim plugin of the accelconf repository\n"
              "(editors/vscode, editors/nvim); any LSP client can start `accelconf lsp`."))
    _arguments(p)
    p.set_defaults(func=run)
    return p


DESCRIPTION = (
    "Run the accelconf language server: diagnostics, completion, hover, quick fixes, formatting "
    "and document symbols for accelerate config files (YAML/JSON) and DeepSpeed JSON. Speaks LSP on "
    "stdin/stdout unless --tcp is given. Settings (section `accelconf`): accelerateVersion, target, "
    "disabledRules. Set ACCELCONF_LSP_LOG=DEBUG for a log on stderr."
)


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--stdio", action="store_true", help="speak LSP on stdin/stdout (the default; accepted for editors that pass it)")
    p.add_argument("--tcp", action="store_true", help="listen on a TCP port instead of stdio")
    p.add_argument("--host", default="127.0.0.1", help="TCP host (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=2087, help="TCP port (default: 2087)")


def run(args: argparse.Namespace) -> int:
    from accelconf_lsp import main as serve

    return serve(tcp=bool(args.tcp), host=args.host, port=args.port)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m accelconf_lsp [--tcp ...]``."""
    parser = argparse.ArgumentParser(prog="python -m accelconf_lsp", description=DESCRIPTION)
    _arguments(parser)
    return run(parser.parse_args(argv))
