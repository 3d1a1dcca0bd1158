"""The three memory tiers: the raw window, the running summary, the diary."""
