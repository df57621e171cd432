"""Amazon SQS adapter: queue, dead-letter queue, redrive and provisioning."""
