"""An async web endpoint that writes a row and enqueues on one connection, in one transaction."""
