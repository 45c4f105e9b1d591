/// Why libsystemd could not be opened (``LibSystemd/missingMessage(_:reason:)``).
struct LibSystemdError: Error, CustomStringConvertible {
    let description: String
}
