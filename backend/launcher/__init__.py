"""The launcher: ``lance-console`` and ``lance-console maintain`` parse their options and start
the console or the maintenance run (the demo data is ``backend.demo``, the configuration they
hand over ``backend.config``)."""
