/// Delivery of the catalog's outbox events to HTTP endpoints.
public enum Webhooks {}
