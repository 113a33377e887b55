import Hummingbird

/// The backend's upload hook and read API (`darkroom serve`).
public enum HTTPService {}
