"""Text: reading YAML and JSON into position-keeping node trees, and the scalar rules accelerate reads by.

Nothing here knows about accelerate or DeepSpeed settings; every other area builds on it.
"""
