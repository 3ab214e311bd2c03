"""Running flows over HTTP: sessions, templating, extraction, retries, orchestration."""
