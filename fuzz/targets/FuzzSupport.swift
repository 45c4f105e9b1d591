// Shared by every fuzz target: invariants that must hold for any parse result.
import AccessoryKit

/// Traps (so libFuzzer records a crash) when a parsed value breaks a documented guarantee.
func checkInvariants(_ message: TelemetryMessage) {
    switch message {
    case .advertisement(let advertisement):
        if let rssi = advertisement.rssi { precondition(TelemetryLimits.rssiRange.contains(rssi), "RSSI out of range") }
        if let power = advertisement.txPower { precondition(TelemetryLimits.rssiRange.contains(power), "TX power out of range") }
        for data in advertisement.manufacturerData { _ = try? ProximityPairing(manufacturerData: data) }
        _ = advertisement.address.description
    case .report(let report):
        for change in report.changes {
            switch change {
            case .rssi(let rssi): precondition(TelemetryLimits.rssiRange.contains(rssi), "RSSI out of range")
            case .battery(let battery):
                for level in [battery.main, battery.left, battery.right, battery.chargingCase] {
                    if let level { precondition((0...100).contains(level), "battery out of range") }
                }
            default: break
            }
        }
    case .rejected(let rejection):
        precondition(!rejection.message.isEmpty, "rejection without a message")
    case .gatewayStatus, .trackerOffline, .ignored:
        break
    }
}

/// Splits fuzz input into a topic suffix (up to the first newline) and a payload.
func splitTopic(_ data: UnsafePointer<UInt8>, _ size: Int) -> (String, UnsafeRawBufferPointer) {
    let buffer = UnsafeRawBufferPointer(start: data, count: size)
    guard let newline = buffer.firstIndex(of: 0x0A) else { return ("", buffer) }
    let topic = String(decoding: UnsafeRawBufferPointer(rebasing: buffer[..<newline]), as: UTF8.self)
    return (topic, UnsafeRawBufferPointer(rebasing: buffer[(newline + 1)...]))
}
