"""`python -m bufferlab.experiments.scenario` runs `bufferlab-sim`."""

import sys

from bufferlab.experiments.scenario.cli import main

sys.exit(main())
