"""The skincare shop on the job engine: models, money, its ports, services, handlers, job types.

It uses `skincare_core.jobs`; the engine never imports it.
"""
