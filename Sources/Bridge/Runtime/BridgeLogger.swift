import AccessoryKit
import JSON

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Log lines on stderr, as text or JSON lines, filtered by level. Warnings, errors and
/// announcements (``announce(_:)``) are also handed to `forward` (the runtime publishes them on
/// `bridge/log`). Callers never pass
/// secrets; the configuration's redacted summary is the only configuration ever logged.
public struct BridgeLogger: Sendable {
    public enum Level: Int, Comparable, Sendable, CaseIterable {
        case debug, info, warning, error

        public var name: String { String(describing: self) }

        public init?(name: String) {
            guard let level = Self.allCases.first(where: { $0.name == name }) else { return nil }
            self = level
        }

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    public var minimum: Level
    public var json: Bool
    public var clock: @Sendable () -> Timestamp
    public var forward: (@Sendable (Level, String) -> Void)?

    public init(
        minimum: Level = .info, json: Bool = false, clock: @escaping @Sendable () -> Timestamp = BridgeClock.now,
        forward: (@Sendable (Level, String) -> Void)? = nil
    ) {
        self.minimum = minimum
        self.json = json
        self.clock = clock
        self.forward = forward
    }

    public func log(_ level: Level, _ message: String) {
        if level >= .warning { forward?(level, message) }
        write(level, message)
    }

    /// An info line that is also handed to `forward` (on `bridge/log`): what the bridge
    /// decided by itself about whose an address is (a re-attachment), which a user must be
    /// able to see without reading the process's log.
    public func announce(_ message: String) {
        forward?(.info, message)
        write(.info, message)
    }

    private func write(_ level: Level, _ message: String) {
        guard level >= minimum else { return }
        let time = ISO8601.string(clock())
        let line =
            json
            ? JSONValue.object([("level", .string(level.name)), ("message", .string(message)), ("at", .string(time))]).serialized
            : "\(time) \(level.name.uppercased()) \(message)"
        StandardStream.error.writeLine(line)
    }

    public func debug(_ message: @autoclosure () -> String) { if minimum <= .debug { log(.debug, message()) } }
    public func info(_ message: String) { log(.info, message) }
    public func warning(_ message: String) { log(.warning, message) }
    public func error(_ message: String) { log(.error, message) }
}
