"""OpenAPI contracts: a spec loaded through the one file resolver, and responses checked against it."""
