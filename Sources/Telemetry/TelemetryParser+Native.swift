import AccessoryKit

extension TelemetryParser {
    /// Native: `<base>/telemetry/<gateway>/<ID>` where ID is the accessory's 12-hex address.
    /// The gateway is the pattern's first `+` when it has two, else the configured name.
    func parseNative(topic: String, captures: [String], payload: UnsafeRawBufferPointer) -> TelemetryMessage {
        let gateway = captures.count >= 2 ? captures[0] : name
        let idText = topic.utf8.lastIndex(of: UInt8(ascii: "/")).map { String(topic[topic.utf8.index(after: $0)...]) } ?? topic
        guard idText.utf8.count == 12, let accessory = BluetoothAddress(idText) else {
            return .rejected(
                TelemetryRejection(
                    .invalidAddress, "topic level \(JSONFields.excerpt(KeyedTopic.redacted(idText))) is not a 12-hex-digit accessory ID",
                    field: "topic",
                    gateway: gateway))
        }
        switch AccessoryReportParser.parse(payload, accessory: accessory, gateway: gateway) {
        case .success(let report): return .report(report)
        case .failure(let rejection): return .rejected(rejection)
        }
    }
}
