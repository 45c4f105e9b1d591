// libFuzzer target: ESPresense device and room status messages ("<topic>\n<payload>").
let espresenseParser = TelemetryParser(format: .espresense)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let (topic, payload) = splitTopic(data, size)
    checkInvariants(espresenseParser.parse(topic: topic.isEmpty ? "espresense/devices/x/room" : topic, payload: payload, receivedAt: 0))
    return 0
}
