// libFuzzer target: native accessory reports ("<topic>\n<payload>").
let nativeParser = TelemetryParser(format: .native)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let (topic, payload) = splitTopic(data, size)
    checkInvariants(
        nativeParser.parse(topic: topic.isEmpty ? "aabridge/telemetry/gw/A1B2C3D4E5F6" : topic, payload: payload, receivedAt: 0))
    return 0
}
