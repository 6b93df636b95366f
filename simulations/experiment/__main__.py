"""``python -m simulations.experiment``: the two-agent experiment (``two_agents.main``)."""

import sys

from simulations.experiment.two_agents import main

sys.exit(main())
