/// Why the HTTP server could not start.
public struct HTTPServerError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
