"""The Litestar HTTP API: checkout, orders, cart, signed payment webhook, health."""
