"""One module per CLI command: ``add_parser(subparsers, name, help)`` and ``run(args) -> int``."""
