/// One thing wrong with the configuration, at its key path.
public struct ConfigurationIssue: Error, Hashable, Sendable, CustomStringConvertible {
    /// The key path, e.g. `products[1].descriptor.bluetooth_manufacturer_data_mask`;
    /// empty for problems with the file as a whole.
    public var path: String
    /// What is wrong and how to fix it; never contains a secret.
    public var message: String
    /// Where the value came from, when known.
    public var origin: YAMLNode.Origin?

    /// Creates an issue.
    public init(path: String, message: String, origin: YAMLNode.Origin? = nil) {
        self.path = path
        self.message = message
        self.origin = origin
    }

    /// `path: message (line L, column C)`.
    public var description: String {
        let head = path.isEmpty ? message : "\(path): \(message)"
        guard let origin else { return head }
        return "\(head) (\(origin))"
    }
}
