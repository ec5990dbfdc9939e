"""accelerate: the settings registry and everything derived from it for accelerate's config file.

The registry (the one table of settings), the :class:`~accelconf.accelerate.model.Config` model,
the pure launcher (what ``accelerate launch`` exports), validation rules, the JSON Schema, ``fmt``
and ``migrate``. Imports only :mod:`accelconf.text` and the top-level helpers.
"""
