"""``python -m accelconf_lsp``: the same as ``accelconf lsp``."""

import sys

from accelconf.commands.lsp import main

sys.exit(main())
