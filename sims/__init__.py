"""sims: vehicle models, lax.scan rollouts, fleets, scenarios and environments built on jaxtire."""
