import AccessoryKit
import Foundation
import TestSupport
import Testing

@testable import Telemetry

/// One line of `Tests/Fixtures/peer-frames.jsonl`: a frame from a public decoder's own unit
/// tests and what that test asserts about it, in the bridge's vocabulary (scripts/peer-corpus).
struct PeerFrame: CustomTestStringConvertible, Sendable {
    let line: Int
    let peer: String
    let test: String
    /// The proximity-pairing message as the peer's test gives it (after the company identifier).
    let frame: String
    /// Field name to the peer's value: a string, an integer, a Bool, or `nil` (unknown).
    let expect: [String: Value]

    enum Value: Hashable, Sendable {
        case text(String)
        case number(Int)
        case flag(Bool)
        case none
    }

    var testDescription: String { "line \(line) (\(peer)): \(test)" }

    static func load() throws -> [PeerFrame] {
        let text = try String(contentsOfFile: Repository.file("Tests/Fixtures/peer-frames.jsonl"), encoding: .utf8)
        var frames: [PeerFrame] = []
        for (index, line) in text.split(separator: "\n").enumerated() {
            let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let expectations = try #require(object["expect"] as? [String: Any])
            #expect(object["repository"] is String && object["path"] is String, "line \(index + 1) cites its source")
            #expect((object["commit"] as? String)?.count == 40, "line \(index + 1) names the commit")
            var expect: [String: Value] = [:]
            for (key, value) in expectations {
                switch value {
                case is NSNull: expect[key] = Value.none
                // JSONSerialization gives both as NSNumber: a Bool's is of type "c" (char).
                case let number as NSNumber where String(cString: number.objCType) == "c": expect[key] = .flag(number.boolValue)
                case let number as NSNumber: expect[key] = .number(number.intValue)
                case let string as String: expect[key] = .text(string)
                default: Issue.record("line \(index + 1): \(key) has an unexpected value")
                }
            }
            frames.append(
                PeerFrame(
                    line: index + 1, peer: try #require(object["peer"] as? String), test: object["test"] as? String ?? "",
                    frame: try #require(object["frame"] as? String), expect: expect))
        }
        return frames
    }

    /// What the bridge makes of the frame, in the same vocabulary: every field it would say,
    /// `.none` for a field it leaves out; a refused frame says only `refused` (and `model`
    /// "counterfeit" when that is why).
    func bridgeReading(previous: Battery? = nil) -> [String: Value] {
        bridgeReadingAndBattery(previous: previous).reading
    }

    /// The reading, and the battery the bridge would hold after it: a frame without the case
    /// level keeps the one `previous` (the same test's earlier frames, one accessory) had, as
    /// the engine does (household.md).
    func bridgeReadingAndBattery(previous: Battery?) -> (reading: [String: Value], battery: Battery?) {
        guard let bytes = Hex.decode(frame) else { return (["refused": .flag(true), "reason": .text("invalidHex")], previous) }
        let data = ManufacturerData(companyIdentifier: ProximityPairing.appleCompanyIdentifier, payload: bytes)
        let pairing: ProximityPairing
        do throws(ProximityPairing.DecodingError) {
            pairing = try ProximityPairing(manufacturerData: data)
        } catch {
            // A genuine variant without status (issue 48) is a sighting, not a refusal: only what
            // it carries in clear, the model, is read.
            if case .noStatus = error {
                let name = (try? ProximityPairingMessage(manufacturerData: data))?.knownModel?.name
                return (["refused": .flag(false), "model": name.map(Value.text) ?? .none, "reason": .text("\(error)")], previous)
            }
            var reading: [String: Value] = ["refused": .flag(true), "reason": .text("\(error)")]
            if case .malformed(.counterfeit) = error { reading["model"] = .text("counterfeit") }
            return (reading, previous)
        }
        let battery = pairing.battery?.keepingCase(previous: previous) ?? previous
        func level(_ value: Int?) -> Value { value.map(Value.number) ?? .none }
        func flag(_ value: Bool?) -> Value { value.map(Value.flag) ?? .none }
        let reading: [String: Value] = [
            "refused": .flag(false),
            "model": pairing.modelName.map(Value.text) ?? .none,
            "main": level(battery?.main), "left": level(battery?.left), "right": level(battery?.right),
            "case": level(battery?.chargingCase),
            "charging": flag(battery?.charging), "left_charging": flag(battery?.leftCharging),
            "right_charging": flag(battery?.rightCharging), "case_charging": flag(battery?.caseCharging),
            "left_in_ear": .flag(pairing.leftInEar), "right_in_ear": .flag(pairing.rightInEar),
            "worn": flag(pairing.knownModel?.worn(pairing)),
        ]
        return (reading, battery)
    }
}

/// The field families the issue names: model, batteries, charging, wear (and refusal).
enum PeerField: String, CaseIterable, Sendable {
    case model, batteries, charging, wear, refused

    init(_ key: String) {
        switch key {
        case "model": self = .model
        case "main", "left", "right", "case": self = .batteries
        case "charging", "left_charging", "right_charging", "case_charging": self = .charging
        case "refused": self = .refused
        default: self = .wear
        }
    }
}

@Suite("peer corpus: public decoders' own test frames")
struct PeerCorpusTests {
    @Test func everyAssertionAgreesOrIsExplained() throws {
        let frames = try PeerFrame.load()
        var assertions: [PeerField: Int] = [:], agreeing: [PeerField: Int] = [:]
        var unexplained: [String] = []
        var explainedByReason: [String: Int] = [:]
        // The frames of one peer test are one accessory's, in order: the case level carries over.
        var held: (test: String, battery: Battery?) = ("", nil)
        for frame in frames {
            let test = frame.peer + frame.test
            let (ours, battery) = frame.bridgeReadingAndBattery(previous: held.test == test ? held.battery : nil)
            held = (test, battery)
            for (key, theirs) in frame.expect.sorted(by: { $0.key < $1.key }) {
                let field = PeerField(key)
                assertions[field, default: 0] += 1
                let mine = ours[key] ?? .none
                if mine == theirs {
                    agreeing[field, default: 0] += 1
                } else if let reason = PeerDisagreement.reason(frame: frame, key: key, theirs: theirs, ours: ours) {
                    explainedByReason[reason.rawValue, default: 0] += 1
                } else {
                    unexplained.append("line \(frame.line) \(frame.peer) '\(frame.test)' \(key): peer \(theirs), bridge \(mine)")
                }
            }
        }
        let total = assertions.values.reduce(0, +), agreed = agreeing.values.reduce(0, +)
        print(
            "peer corpus: \(frames.count) frames, \(total) assertions, \(agreed) agreeing; "
                + PeerField.allCases.map { "\($0.rawValue) \(agreeing[$0, default: 0])/\(assertions[$0, default: 0])" }
                .joined(separator: ", ") + "; explained: \(explainedByReason.sorted { $0.key < $1.key })")
        #expect(unexplained.isEmpty, Comment(rawValue: "\(unexplained.count) unexplained:\n" + unexplained.joined(separator: "\n")))
        // docs/telemetry.md states the counts: they must be the ones this corpus gives.
        let doc = try String(contentsOfFile: Repository.file("docs/telemetry.md"), encoding: .utf8)
        #expect(doc.contains("\(frames.count) frames, \(total) assertions, \(agreed) agreeing"), "docs/telemetry.md's corpus counts")
        for reason in PeerDisagreement.allCases {
            #expect(
                doc.contains("| `\(reason.rawValue)` | \(explainedByReason[reason.rawValue, default: 0]) |"),
                "docs/telemetry.md lists \(reason.rawValue) with its count")
        }
    }

    @Test func everyPeerIsCited() throws {
        let frames = try PeerFrame.load()
        #expect(Set(frames.map(\.peer)) == ["CAPod", "TheengsDecoder"])
        #expect(frames.count >= 90)
    }
}
