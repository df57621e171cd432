"""The shop's adapters on PostgreSQL: the repositories (catalog, orders, payments, reports) and
the unit of work that opens one transaction for all of them and the job outbox."""

from skincare_postgres.shop.unit_of_work import PostgresDatabase, PostgresUnitOfWork

__all__ = ["PostgresDatabase", "PostgresUnitOfWork"]
