"""environment: the machine a config runs on, detected (probe) or described (targets), and the checks against it."""
