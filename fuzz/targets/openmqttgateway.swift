// libFuzzer target: OpenMQTTGateway / Theengs messages. Input: "<topic>\n<payload>"; without a
// newline the whole input is the payload on a fixed advertisement topic.
let omgParser = TelemetryParser(format: .openmqttgateway)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let (topic, payload) = splitTopic(data, size)
    checkInvariants(omgParser.parse(topic: topic.isEmpty ? "home/gw1/BTtoMQTT/AABBCCDDEEFF" : topic, payload: payload, receivedAt: 0))
    return 0
}
