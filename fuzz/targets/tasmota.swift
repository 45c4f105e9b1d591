// libFuzzer target: Tasmota BLE messages, JSON around a raw advertisement.
let tasmotaParser = TelemetryParser(format: .tasmota)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let (topic, payload) = splitTopic(data, size)
    checkInvariants(tasmotaParser.parse(topic: topic.isEmpty ? "tele/t/BLE" : topic, payload: payload, receivedAt: 0))
    return 0
}
