"""The node layer: the services of one node, over the store and the core (async, no sockets).

The face (``commons.cli``, ``commons.mcp_server``) and the daemon call these; they call the store
(``commons.store``) and the pure core (``commons.core``). docs/architecture.md draws the layers.
"""
