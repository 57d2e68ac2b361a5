import sys

from gradlint.trace.runner import main

sys.exit(main())
