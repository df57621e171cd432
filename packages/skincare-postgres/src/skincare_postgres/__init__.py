"""PostgreSQL adapters: schema, migrations, unit of work, repositories and the Postgres queue."""
