import sys

from sharpdp.cli import main

sys.exit(main())
