// libFuzzer target: Apple proximity pairing (manufacturer data of company 0x004C, the bytes
// after the company identifier). Any input decodes, is a variant without status, or is refused
// with a reason; a decoded battery is laid out by model (main only for a single battery, never
// main for pods), every level a whole tenth, every charging flag with its level; and a gateway
// parser refuses the advertisement exactly when the decoder calls the message malformed.
import AccessoryKit

private let key = AccessoryKey(bytes: Array(0..<16))!
private let parser = TelemetryParser(format: .openmqttgateway)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let payload = Array(UnsafeBufferPointer(start: data, count: size))
    let manufacturer = ManufacturerData(companyIdentifier: ProximityPairing.appleCompanyIdentifier, payload: payload)
    var malformation: ProximityPairing.Malformation?
    do throws(ProximityPairing.DecodingError) {
        let pairing = try ProximityPairing(manufacturerData: manufacturer)
        if let battery = pairing.battery { check(battery, layout: pairing.knownModel?.batteries ?? .pods) }
        for layout in [AppleModel.Batteries.single, .pods] {
            if let battery = pairing.battery(layout) { check(battery, layout: layout) }
        }
        if let status = pairing.decrypted(with: key), let battery = status.battery(pairing.knownModel?.batteries ?? .pods) {
            for level in [battery.main, battery.left, battery.right, battery.chargingCase] {
                if let level { precondition((0...100).contains(level), "decrypted level out of range") }
            }
        }
        _ = pairing.knownModel?.placement(pairing)
    } catch {
        if case .malformed(let reason) = error { malformation = reason }
        precondition(!"\(error)".isEmpty, "refusal without a reason")
    }
    // Every variant a genuine device sends is read (issue 48): a message is read exactly when it
    // is not refused, and its status only in the status variant.
    if let message = try? ProximityPairingMessage(manufacturerData: manufacturer) {
        precondition(malformation == nil, "a refused message was read")
        precondition((message.status != nil) == (message.variant == .status), "a status outside the status variant")
    }
    var advertisement = Advertisement(gateway: "gw", address: BluetoothAddress(rawValue: 1), receivedAt: 0)
    advertisement.manufacturerData = [manufacturer]
    precondition(advertisement.proximityPairingMalformation == malformation, "the advertisement's malformation differs")
    // The same bytes through a gateway: refused (and counted) exactly when malformed.
    let json = #"{"id":"A1:B2:C3:D4:E5:F6","manufacturerdata":"4c00\#(Hex.encode(payload))"}"#
    let message = parser.parse(topic: "home/gw/BTtoMQTT/A1B2C3D4E5F6", payload: Array(json.utf8), receivedAt: 0)
    checkInvariants(message)
    switch message {
    case .rejected(let rejection):
        precondition(malformation != nil && rejection.code == .invalidProximityPairing, "refused without a malformation")
    case .advertisement:
        precondition(malformation == nil, "a malformed message was not refused")
    default:
        preconditionFailure("unexpected classification")
    }
    return 0
}

/// A battery of `layout`: the keys it may have, whole tenths, flags only with their levels.
private func check(_ battery: Battery, layout: AppleModel.Batteries) {
    switch layout {
    case .single:
        precondition(battery.left == nil && battery.right == nil && battery.chargingCase == nil, "a single battery with pods")
        precondition(battery.leftCharging == nil && battery.rightCharging == nil && battery.caseCharging == nil, "pods' flags")
    case .pods:
        precondition(battery.main == nil && battery.charging == nil, "pods with a single battery")
    }
    let pairs: [(Int?, Bool?)] = [
        (battery.main, battery.charging), (battery.left, battery.leftCharging), (battery.right, battery.rightCharging),
        (battery.chargingCase, battery.caseCharging),
    ]
    for (level, flag) in pairs {
        precondition((level == nil) == (flag == nil), "a charging flag without its level, or a level without its flag")
        if let level { precondition((0...100).contains(level) && level % 10 == 0, "a clear level that is no tenth") }
    }
    precondition(battery.hasLevel, "a battery without a level")
    let kept = battery.keepingCase(previous: Battery(left: 10, chargingCase: 40, caseCharging: true))
    precondition(kept.main != nil || kept.chargingCase != nil, "the case level was not kept")
}
