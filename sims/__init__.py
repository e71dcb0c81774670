"""sims: vehicle models, lax.scan rollouts, fleets, scenarios and environments built on jaxtire."""
import sims.envs  # noqa: E402,F401  registers the gymnasium ids (jaxtire/Braking-v0, ...); loads gymnasium only
