"""The daemon: the node in the commons, as one trio program (``main``), one per home (``lock``),
saying what it is doing in ``data/daemon.json`` (``status``)."""
