"""Settings (in sections), the config file, and logging."""
