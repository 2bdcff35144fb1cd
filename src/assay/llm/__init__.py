"""Provider clients, retries, cost accounting and the response cache."""
