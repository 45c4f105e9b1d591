/// The `storage:` section.
public struct StorageConfiguration: Hashable, Sendable {
    /// The SQLite database, created on first start; relative paths are from the working directory.
    public var path: String

    /// Creates the section; the default is `data/aabridge.sqlite3`.
    public init(path: String = "data/aabridge.sqlite3") {
        self.path = path
    }
}
