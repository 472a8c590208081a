"""``python -m sharpdp``: the ``sharpdp`` command-line program (the same as ``python -m sharpdp.cli``)."""

import sys

from sharpdp.cli import main

sys.exit(main())
