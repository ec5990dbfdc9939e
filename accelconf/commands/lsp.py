"""``accelconf lsp``: run the language server on stdio, or on a TCP port with ``--tcp``.

Only gathers options (the server's own, :func:`accelconf_lsp.add_arguments`); the server lives in the
``accelconf_lsp`` package (``lsp/accelconf_lsp``), whose pygls part is imported when the command runs
so that other commands never pay for it.
"""

from __future__ import annotations

import argparse

from accelconf_lsp import DESCRIPTION, add_arguments


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:  # type: ignore[no-untyped-def]
    from accelconf.commands import help_texts

    p: argparse.ArgumentParser = subparsers.add_parser(
        name,
        help=help_text,
        **help_texts(
            DESCRIPTION,
            [
                ("accelconf lsp", "stdio, what editors start"),
                ("accelconf lsp --tcp --port 2087", "for debugging"),
                ("ACCELCONF_LSP_LOG=DEBUG accelconf lsp", "a log on stderr"),
            ],
            "0 the client shut the server down, 2 bad arguments",
            extra="editor set-up: the VS Code extension and Neovim plugin of the accelconf repository\n"
            "(editors/vscode, editors/nvim); any LSP client can start `accelconf lsp`.",
        ),
    )
    add_arguments(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from accelconf_lsp import main as serve

    return serve(tcp=bool(args.tcp), host=args.host, port=args.port)
