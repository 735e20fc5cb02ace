import sys

from benign.cli import main

sys.exit(main())
