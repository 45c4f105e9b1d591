/// A child process or a loopback port could not be had (the system call's reason).
public struct LocalProcessError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
