import sys

from joinops.cli import main

sys.exit(main())
