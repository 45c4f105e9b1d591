/// The `log:` section.
public struct LogConfiguration: Hashable, Sendable {
    /// The least severe level written.
    public enum Level: String, CaseIterable, Hashable, Sendable, Comparable {
        case debug
        case info
        case warning
        case error

        private var rank: Int {
            switch self {
            case .debug: 0
            case .info: 1
            case .warning: 2
            case .error: 3
            }
        }

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rank < rhs.rank }
    }

    /// How log lines are written.
    public enum Format: String, CaseIterable, Hashable, Sendable {
        case text
        case json
    }

    public var level: Level
    public var format: Format

    /// Creates the section; the defaults are `info` and `text`.
    public init(level: Level = .info, format: Format = .text) {
        self.level = level
        self.format = format
    }
}
