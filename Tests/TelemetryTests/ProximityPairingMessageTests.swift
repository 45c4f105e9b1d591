import AccessoryKit
import Testing

@testable import Telemetry

/// The proximity-pairing variants genuine accessories send (issue 48, docs/telemetry.md
/// "Proximity-pairing variants"): each is a sighting, the model read where it is in clear, the
/// status only from the status frame. The case's and the prefix-0x00 frames are built to issue
/// 48's description (no public capture of either was found); the prefix-0x07 one is CAPod #603's.
@Suite("proximity-pairing variants")
struct ProximityPairingMessageTests {
    static func message(_ hex: String) throws(ProximityPairing.DecodingError) -> ProximityPairingMessage {
        try ProximityPairingMessage(manufacturerData: ManufacturerData(companyIdentifier: 0x004C, payload: Hex.decode(hex) ?? []))
    }

    static func advertisement(_ hex: String) -> Advertisement {
        Advertisement(
            gateway: "gw", address: BluetoothAddress("4A:00:00:00:00:01")!,
            manufacturerData: [ManufacturerData(companyIdentifier: 0x004C, payload: Hex.decode(hex) ?? [])], receivedAt: 0)
    }

    /// Whether the OpenMQTTGateway parser takes the manufacturer data as an advertisement.
    static func accepted(_ hex: String) -> Bool {
        let payload = #"{"id":"4A:00:00:00:00:01","mac_type":1,"manufacturerdata":"4c00\#(hex)","rssi":-60}"#
        let parsed = TelemetryParser(format: .openmqttgateway).parse(
            topic: "home/gw/BTtoMQTT/4A0000000001", payload: Array(payload.utf8), receivedAt: 0)
        if case .advertisement = parsed { return true }
        return false
    }

    static let connected = "070f000f20" + String(repeating: "00", count: 12)
    static let onConnect = "071907192035dfde4676ce665cf46ebab6ac1b694ca7d809bf9a04"
    static let chargingCase = "071106" + "8f2a61c03b9d4e7751aa0cde36f2190b"

    @Test("the status frame: variant status, its model and status")
    func status() throws {
        let message = try Self.message("0719010e2022f58f00000a7d9fff27234873d4305e0fed1b39e2b8")
        #expect(message.variant == .status)
        #expect(message.model == 0x200E)
        #expect(message.status?.leftInEar == true)
    }

    @Test("07 0f 00: the model in clear, no status; the decoder gives the model alone")
    func connectedVariant() throws {
        let message = try Self.message(Self.connected)
        #expect(message.variant == .connected)
        #expect(message.knownModel?.name == "AirPods (2nd generation)")
        #expect(message.status == nil)
        #expect(Self.accepted(Self.connected))
        let decoded = PlacementDecoder.appleProximity.decode(Self.advertisement(Self.connected), hardware: .inEarBud)
        #expect(decoded == AdvertisementSighting.Decoded(model: "AirPods (2nd generation)"))
    }

    @Test("07 19 07 (CAPod #603, on connect): the model, no status")
    func onConnectVariant() throws {
        let message = try Self.message(Self.onConnect)
        #expect(message.variant == .onConnect)
        #expect(message.knownModel?.name == "AirPods 4")
        #expect(message.status == nil)
        #expect(Self.accepted(Self.onConnect))
    }

    @Test("07 11 06 + 16 bytes, the case's own frame: nothing in clear, the 16 bytes kept unread")
    func chargingCaseVariant() throws {
        let message = try Self.message(Self.chargingCase)
        #expect(message.variant == .chargingCase)
        #expect(message.model == nil && message.status == nil)
        #expect(message.chargingCasePayload == Hex.decode("8f2a61c03b9d4e7751aa0cde36f2190b"))
        #expect(Self.accepted(Self.chargingCase))
        #expect(PlacementDecoder.appleProximity.decode(Self.advertisement(Self.chargingCase), hardware: .inEarBud) == nil)
        // ChargingCaseFlowTests' keyed frame: its 16 bytes, read as a status frame's payload with
        // the key 00 01 ... 0f, are inconsistent, so decrypting the case's bytes the buds' way
        // would cost the IRK's attribution there (the case's are not decrypted).
        let keyed = try Self.message("071106" + "44b16a8fe4ad62bf496b09f6a8beb5db")
        let asStatus = try ProximityPairing(
            manufacturerData: ManufacturerData(
                companyIdentifier: 0x004C,
                payload: Hex.decode("0719010e20" + "00ff0f000000")! + (keyed.chargingCasePayload ?? [])))
        #expect(asStatus.decrypted(with: AccessoryKey(bytes: (0..<16).map { UInt8($0) })!) == nil)
        // Prefix 0x06 with other than 16 bytes after it is no case frame the sources describe.
        #expect(try Self.message("071006" + String(repeating: "00", count: 15)).variant == .unread)
    }

    @Test("another prefix, an empty or a short message: a sighting, nothing read")
    func unreadVariants() throws {
        for hex in ["0705420e20aabb", "0700", "07020014", "0703010e20"] {
            let message = try Self.message(hex)
            #expect(message.variant == .unread, "\(hex)")
            #expect(message.model == nil, "\(hex)")
            #expect(Self.accepted(hex), "\(hex)")
        }
    }

    @Test("what no device sends is still refused, whatever the prefix: counterfeit, length contradicting the frame")
    func stillRefused() {
        for (hex, malformation) in [
            ("071301" + String(repeating: "00", count: 18), ProximityPairing.Malformation.counterfeit),
            ("071306" + String(repeating: "00", count: 18), .counterfeit),
            ("0711" + "06" + String(repeating: "00", count: 15), .shorterThanLength),
            (Self.chargingCase + "42", .longerThanLength),
        ] {
            #expect(throws: ProximityPairing.DecodingError.malformed(malformation)) { try Self.message(hex) }
            #expect(!Self.accepted(hex), "\(hex)")
        }
    }
}
