"""One module per resource: its handlers, the problems each answers, and its `router`."""
