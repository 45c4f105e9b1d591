import AccessoryKit
import Foundation

/// Wall-clock time as the engine's `Timestamp`; the only place the runtime reads the clock.
public enum BridgeClock {
    @Sendable public static func now() -> Timestamp {
        Timestamp(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded()))
    }
}
