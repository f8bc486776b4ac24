"""The soak: hours of steady load, memory and descriptors sampled (`python -m bench.soak`)."""
