/// A secret value (the MQTT password, the HTTP token, the database password) that never prints itself.
///
/// Wrapping it, rather than relying on every formatter to skip the field, means
/// `print`, string interpolation, `dump` and error messages all show `<redacted>`;
/// only `revealed` gives the text, and only what hands it to its library should call it
/// (the MQTT client; `run`, to open the PostgreSQL store).
public struct Secret: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The secret text.
    public let revealed: String

    /// Wraps a secret.
    public init(_ value: String) {
        self.revealed = value
    }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
    public var customMirror: Mirror { Mirror(reflecting: "<redacted>") }
}
