"""``python -m simulations.experiment``: the N-agent experiment (``cli.main``)."""

import sys

from simulations.experiment.cli import main

sys.exit(main())
