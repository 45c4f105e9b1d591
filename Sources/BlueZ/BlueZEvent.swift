import Telemetry

/// What ``BlueZClient``'s thread reports, in order, through the closure it was given.
public enum BlueZEvent: Sendable {
    /// An advertisement the adapter heard (`receivedAt` 0: the loop stamps it with its clock).
    case heard(Advertisement)
    /// The client's state changed: scanning on `adapter` in `mode`, or a fault (with BlueZ's
    /// or libsystemd's own words in `detail`).
    case state(BlueZState)
}
