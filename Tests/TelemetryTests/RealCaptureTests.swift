import AccessoryKit
import Foundation
import TestSupport
import Testing

@testable import Telemetry

/// Frames real accessories sent, as their owners published them (issue 48): every complete
/// genuine frame is a sighting, never refused; what the owner stated about model, levels and
/// wear agrees (levels within the nibble's 10 %), or the disagreement is one listed and
/// explained (``RealCaptureDisagreement``). docs/telemetry.md gives the figures this prints.
@Suite("real captures: frames owners published")
struct RealCaptureTests {
    /// Frames, refusals before and after issue 48, and the stated assertions that agree, for one
    /// group of captures (a source, a model).
    struct Figures: Equatable {
        var frames = 0, complete = 0
        var refusedBefore = 0, refusedAfter = 0, completeRefusedBefore = 0, completeRefusedAfter = 0
        var models = (agreeing: 0, stated: 0), levels = (agreeing: 0, stated: 0), wear = (agreeing: 0, stated: 0)

        static func == (left: Figures, right: Figures) -> Bool { left.row == right.row }

        /// The table row docs/telemetry.md shows for the group.
        var row: String {
            "\(frames) | \(complete) | \(refusedBefore) (\(completeRefusedBefore)) | \(refusedAfter) (\(completeRefusedAfter)) | "
                + "\(models.agreeing)/\(models.stated) | \(levels.agreeing)/\(levels.stated) | \(wear.agreeing)/\(wear.stated)"
        }
    }

    static let levelKeys: Set = ["main", "left", "right", "case"]
    static let wearKeys: Set = ["worn", "left_in_ear", "right_in_ear", "wear_reported"]

    /// Runs the corpus: the figures per source and per model, the explained disagreements and
    /// those nothing explains.
    static func run() throws -> (bySource: [String: Figures], byModel: [String: Figures], explained: [String: Int], unexplained: [String]) {
        var bySource: [String: Figures] = [:], byModel: [String: Figures] = [:]
        var explained: [String: Int] = [:], unexplained: [String] = []
        for capture in try RealCapture.load() {
            var figures = Figures()
            figures.frames = 1
            figures.complete = capture.publishedWithoutEncryptedBytes ? 0 : 1
            let before = RealCapture.refusedBeforeIssue48(capture.frame), after = RealCapture.refusedByBridge(capture.frame)
            figures.refusedBefore = before ? 1 : 0
            figures.refusedAfter = after ? 1 : 0
            figures.completeRefusedBefore = before && figures.complete == 1 ? 1 : 0
            figures.completeRefusedAfter = after && figures.complete == 1 ? 1 : 0
            if after && figures.complete == 1 { unexplained.append("\(capture.testDescription): a complete genuine frame refused") }
            // The device sent it whole: completed, it is never refused either.
            if RealCapture.refusedByBridge(capture.sentFrame) { unexplained.append("\(capture.testDescription): refused as sent") }
            let ours = capture.bridgeReading()
            for (key, theirs) in capture.stated.sorted(by: { $0.key < $1.key }) {
                let mine = ours[key] ?? .none
                let agrees: Bool
                if Self.levelKeys.contains(key), case .number(let stated) = theirs, case .number(let read) = mine {
                    agrees = abs(stated - read) <= 10
                } else {
                    agrees = mine == theirs
                }
                if Self.levelKeys.contains(key) {
                    figures.levels.stated += 1
                    figures.levels.agreeing += agrees ? 1 : 0
                } else if Self.wearKeys.contains(key) {
                    figures.wear.stated += 1
                    figures.wear.agreeing += agrees ? 1 : 0
                } else if key == "model" {
                    figures.models.stated += 1
                    figures.models.agreeing += agrees ? 1 : 0
                }
                guard !agrees else { continue }
                if let reason = RealCaptureDisagreement.reason(capture, key: key, ours: ours) {
                    explained[reason.rawValue, default: 0] += 1
                } else {
                    unexplained.append("\(capture.testDescription) \(key): owner \(theirs), bridge \(mine)")
                }
            }
            bySource[capture.source, default: Figures()].add(figures)
            byModel[capture.device, default: Figures()].add(figures)
        }
        return (bySource, byModel, explained, unexplained)
    }

    /// docs/telemetry.md's table of the corpus: per source, then per model, then the total.
    static func table(bySource: [String: Figures], byModel: [String: Figures]) -> String {
        var lines = [
            "| source / model | frames | complete | refused before (complete) | refused after (complete) | model | levels | wear |",
            "|---|---|---|---|---|---|---|---|",
        ]
        var total = Figures()
        for (source, figures) in bySource.sorted(by: { $0.key < $1.key }) {
            lines.append("| \(source) | \(figures.row) |")
            total.add(figures)
        }
        for (model, figures) in byModel.sorted(by: { $0.key < $1.key }) { lines.append("| *\(model)* | \(figures.row) |") }
        lines.append("| **all** | \(total.row) |")
        return lines.joined(separator: "\n")
    }

    @Test func everyGenuineFrameIsASightingAndAgreesOrIsExplained() throws {
        let (bySource, byModel, explained, unexplained) = try Self.run()
        let table = Self.table(bySource: bySource, byModel: byModel)
        print("real captures:\n" + table + "\nexplained: \(explained.sorted { $0.key < $1.key })")
        #expect(unexplained.isEmpty, Comment(rawValue: "\(unexplained.count) unexplained:\n" + unexplained.joined(separator: "\n")))
        let doc = try String(contentsOfFile: Repository.file("docs/telemetry.md"), encoding: .utf8)
        #expect(doc.contains(table), Comment(rawValue: "docs/telemetry.md should hold, as generated:\n" + table))
        for reason in RealCaptureDisagreement.allCases {
            #expect(
                doc.contains("| `\(reason.rawValue)` | \(explained[reason.rawValue, default: 0]) |"),
                "docs/telemetry.md lists \(reason.rawValue) with its count")
        }
    }

    @Test func everyFrameIsCitedOnce() throws {
        let captures = try RealCapture.load()
        #expect(!captures.isEmpty)
        // The frames are the devices': one that a decoder also took into its own tests is cited
        // to the thread where its owner published it, and its line says it is also a peer's vector.
        let peers = Set(try PeerFrame.load().map { $0.frame.lowercased() })
        for capture in captures {
            #expect(peers.contains(Hex.encode(capture.frame)) == capture.alsoPeerVector, "\(capture.testDescription)")
        }
    }
}

extension RealCaptureTests.Figures {
    mutating func add(_ other: Self) {
        frames += other.frames
        complete += other.complete
        refusedBefore += other.refusedBefore
        refusedAfter += other.refusedAfter
        completeRefusedBefore += other.completeRefusedBefore
        completeRefusedAfter += other.completeRefusedAfter
        models = (models.agreeing + other.models.agreeing, models.stated + other.models.stated)
        levels = (levels.agreeing + other.levels.agreeing, levels.stated + other.levels.stated)
        wear = (wear.agreeing + other.wear.agreeing, wear.stated + other.wear.stated)
    }
}
