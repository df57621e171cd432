"""Route handlers, one module per resource; each handler calls one core service."""
