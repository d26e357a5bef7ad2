"""Facts inferstack relies on, as data with their sources: versions, instance types, CRD schemas.

Nothing here imports any other inferstack module.
"""
