"""``python -m accelconf_lsp``: the same as ``accelconf lsp``."""

import sys

from accelconf_lsp import cli_main

sys.exit(cli_main())
