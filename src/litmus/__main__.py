import sys

from litmus.cli import main

sys.exit(main())
