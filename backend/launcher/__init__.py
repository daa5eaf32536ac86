"""The launcher: command line, demo namespace, launch settings, saved connections."""
