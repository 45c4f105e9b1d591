/// The `health:` section.
public struct HealthConfiguration: Hashable, Sendable {
    /// Seconds between `bridge/health` publications.
    public var intervalSeconds: Int

    /// Creates the section; the default is 60 seconds.
    public init(intervalSeconds: Int = 60) {
        self.intervalSeconds = intervalSeconds
    }
}
