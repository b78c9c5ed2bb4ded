"""The example shop's Django project: settings and URLs."""
