import AccessoryKit
import Foundation
import TestSupport
import Testing

@testable import Telemetry

/// One line of `Tests/Fixtures/real-captures.jsonl`: a proximity-pairing frame a real accessory
/// sent, as its owner published it (an issue thread of a public decoder), with what the owner
/// said it was and was doing. Kept apart from the decoders' own test vectors (peer-frames.jsonl):
/// these are the devices' words, not a decoder author's.
struct RealCapture: CustomTestStringConvertible, Sendable {
    let line: Int
    let source: String
    let url: String
    /// What the owner said the device was (the per-model figures group by it).
    let device: String
    /// The message as published: type 0x07, length, then its bytes (after the company identifier).
    let frame: [UInt8]
    /// The owner posted the frame without its 16 encrypted bytes ("excluding the hash"): as
    /// published it is shorter than its own length byte.
    let publishedWithoutEncryptedBytes: Bool
    /// A decoder took the frame into its own tests too (it is in peer-frames.jsonl as well).
    let alsoPeerVector: Bool
    /// What the owner stated, in the bridge's vocabulary: `model`, levels (`left`, `right`,
    /// `case`, `main`), `worn`, `left_in_ear`, `right_in_ear`, `wear_reported`, `clone`.
    let stated: [String: PeerFrame.Value]

    var testDescription: String { "line \(line) (\(source), \(device))" }

    static func load() throws -> [RealCapture] {
        let text = try String(contentsOfFile: Repository.file("Tests/Fixtures/real-captures.jsonl"), encoding: .utf8)
        var captures: [RealCapture] = []
        for (index, line) in text.split(separator: "\n").enumerated() {
            let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let url = try #require(object["url"] as? String)
            #expect(url.hasPrefix("https://github.com/"), "line \(index + 1) cites a public thread")
            #expect((object["said"] as? String)?.isEmpty == false, "line \(index + 1) says what its owner said")
            var stated: [String: PeerFrame.Value] = [:]
            for (key, value) in try #require(object["stated"] as? [String: Any]) {
                switch value {
                // JSONSerialization gives both as NSNumber: a Bool's is of type "c" (char).
                case let number as NSNumber where String(cString: number.objCType) == "c": stated[key] = .flag(number.boolValue)
                case let number as NSNumber: stated[key] = .number(number.intValue)
                case let string as String: stated[key] = .text(string)
                default: Issue.record("line \(index + 1): \(key) has an unexpected value")
                }
            }
            let hex = try #require(object["frame"] as? String)
            let source = try #require(object["source"] as? String), device = try #require(object["device"] as? String)
            captures.append(
                RealCapture(
                    line: index + 1, source: source, url: url, device: device, frame: try #require(Hex.decode(hex)),
                    publishedWithoutEncryptedBytes: object["published_without_encrypted_bytes"] as? Bool ?? false,
                    alsoPeerVector: object["also_peer_vector"] as? Bool ?? false, stated: stated))
        }
        return captures
    }

    /// The frame as the device sent it: as published, or with 16 placeholder bytes where the
    /// owner left the encrypted ones out (nothing in clear depends on them).
    var sentFrame: [UInt8] { publishedWithoutEncryptedBytes ? frame + [UInt8](repeating: 0, count: 16) : frame }

    /// Whether the bridge refuses `bytes` as OpenMQTTGateway would report them: the gateway
    /// parser's own verdict, `invalidProximityPairing` or not.
    static func refusedByBridge(_ bytes: [UInt8]) -> Bool {
        let payload = #"{"id":"4A:00:00:00:00:01","mac_type":1,"manufacturerdata":"4c00\#(Hex.encode(bytes))","rssi":-60}"#
        let message = TelemetryParser(format: .openmqttgateway).parse(
            topic: "home/gw/BTtoMQTT/4A0000000001", payload: Array(payload.utf8), receivedAt: 0)
        if case .rejected(let rejection) = message { return rejection.code == .invalidProximityPairing }
        return false
    }

    /// Whether the rules before issue 48 refused `bytes`: those of ``ProximityPairing/message(in:)``
    /// then, which also refused every prefix other than 0x01. Written out here, once, so that the
    /// corpus states how many genuine frames the old rules lost.
    static func refusedBeforeIssue48(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 2, bytes[0] == ProximityPairing.messageType else { return false }
        let end = 2 + Int(bytes[1])
        if end != bytes.count || bytes[1] == ProximityPairing.counterfeitLength { return true }
        guard bytes.count >= 9 else { return false }
        if bytes[2] != ProximityPairing.statusPrefix { return true }
        let nibbles = [bytes[6] & 0x0F, bytes[6] >> 4, bytes[7] & 0x0F]
        return nibbles.contains { $0 > 10 && $0 < 15 }
    }

    /// What the bridge reads from the frame the device sent, in the fixture's vocabulary.
    func bridgeReading() -> [String: PeerFrame.Value] {
        let data = ManufacturerData(companyIdentifier: ProximityPairing.appleCompanyIdentifier, payload: sentFrame)
        guard let message = try? ProximityPairingMessage(manufacturerData: data) else { return [:] }
        var reading: [String: PeerFrame.Value] = ["model": message.knownModel.map { .text($0.name) } ?? .none]
        if let wearSensor = message.knownModel?.wearSensor { reading["wear_reported"] = .flag(wearSensor != .none) }
        guard let pairing = message.status else { return reading }
        let battery = pairing.battery
        for (key, level) in [("main", battery?.main), ("left", battery?.left), ("right", battery?.right), ("case", battery?.chargingCase)] {
            reading[key] = level.map(PeerFrame.Value.number) ?? PeerFrame.Value.none
        }
        // A known model says worn its own way (none without a sensor); an unknown one by the earbuds' bits.
        let worn: Bool?
        if let model = pairing.knownModel { worn = model.worn(pairing) } else { worn = pairing.leftInEar || pairing.rightInEar }
        reading["worn"] = worn.map(PeerFrame.Value.flag) ?? PeerFrame.Value.none
        reading["left_in_ear"] = .flag(pairing.leftInEar)
        reading["right_in_ear"] = .flag(pairing.rightInEar)
        return reading
    }
}
