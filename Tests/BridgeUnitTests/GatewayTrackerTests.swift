import AccessoryKit
import JSON
import Testing

@testable import Bridge

/// household.md, "What gateways and advertisements really say": the figures and problems of
/// each heard gateway, with times given.
@Suite("Gateway figures and problems")
struct GatewayTrackerTests {
    static func at(_ seconds: Double) -> Timestamp { Timestamp(milliseconds: 1_800_000_000_000 + Int64(seconds * 1000)) }

    static func tracker() -> GatewayTracker {
        GatewayTracker(configured: [(name: "omg", format: .openmqttgateway), (name: "esp", format: .espresense)])
    }

    /// `count` advertisements from `name` through entry 0, one every `every` seconds from `from`.
    static func advertise(
        _ tracker: inout GatewayTracker, _ name: String = "hall", count: Int, from: Double = 0, every: Double = 0.5,
        withData: Bool = false, attributed: Bool = false
    ) -> [GatewayTracker.Appeared] {
        (0..<count).flatMap { index in
            let time = at(from + Double(index) * every)
            _ = tracker.seen(name, through: 0, at: time)
            return tracker.advertisement(name, through: 0, withManufacturerData: withData, attributed: attributed, at: time).appeared
        }
    }

    static func heard(_ tracker: GatewayTracker, at seconds: Double, entry: Int = 0) -> JSONValue? {
        tracker.payload(at: at(seconds)).arrayValue?[entry]["heard"]?.arrayValue?.first
    }

    @Test("no_manufacturer_data at the 50th advertisement of a minute without any; not at 49, not with one that has it")
    func noManufacturerData() {
        var tracker = Self.tracker()
        #expect(Self.advertise(&tracker, count: 49).isEmpty)
        let appeared = Self.advertise(&tracker, count: 1, from: 24.5)
        #expect(appeared.map(\.problem) == [.noManufacturerData])
        #expect(appeared.first?.gateway == "hall")
        // Appeared once: the next ones add nothing to log.
        #expect(Self.advertise(&tracker, count: 10, from: 25).isEmpty)
        #expect(Self.heard(tracker, at: 30)?["problems"]?.arrayValue?.first?["code"] == "no_manufacturer_data")
        var withData = Self.tracker()
        _ = Self.advertise(&withData, count: 1, withData: true)
        #expect(Self.advertise(&withData, count: 100, from: 1).isEmpty)
    }

    @Test("the figures are of the last minute: a gateway gone quiet shows none, and its problem goes")
    func lastMinute() {
        var tracker = Self.tracker()
        _ = Self.advertise(&tracker, count: 60, every: 0.5)
        _ = Self.advertise(&tracker, count: 20, from: 30, every: 0.5, withData: true, attributed: true)
        let now = Self.heard(tracker, at: 40)
        #expect(now?["advertisements_per_min"] == 80)
        #expect(now?["with_manufacturer_data"]?.doubleValue == 0.25)
        #expect(now?["attributed"] == 20)
        #expect(Self.heard(tracker, at: 200)?["advertisements_per_min"] == 0)
        #expect(Self.heard(tracker, at: 200)?["with_manufacturer_data"] == .null)
        var quiet = Self.tracker()
        _ = Self.advertise(&quiet, count: 60)
        #expect(quiet.evaluateAll(at: Self.at(31)).isEmpty)
        #expect(Self.heard(quiet, at: 31)?["problems"]?.arrayValue?.count == 1)
        _ = quiet.evaluateAll(at: Self.at(200))
        #expect(Self.heard(quiet, at: 200)?["problems"] == [])
        #expect(quiet.problemsChanged)
    }

    @Test("espresense_needs_irk on ESPresense gateways only, while an Apple accessory has no IRK, naming it")
    func espresenseNeedsIRK() throws {
        var tracker = Self.tracker()
        _ = tracker.seen("kitchen", through: 1, at: Self.at(0))
        _ = tracker.seen("hall", through: 0, at: Self.at(0))
        let appeared = tracker.needIRK(["Alice's AirPods"], at: Self.at(1))
        #expect(appeared.map(\.gateway) == ["kitchen"])
        #expect(appeared.first?.message.contains("Alice's AirPods") == true)
        #expect(tracker.needIRK(["Alice's AirPods"], at: Self.at(2)).isEmpty, "nothing changed")
        _ = tracker.needIRK([], at: Self.at(3))
        #expect(Self.heard(tracker, at: 3, entry: 1)?["problems"] == [])
        #expect(tracker.problemCount(.espresenseNeedsIRK, entry: 1) == 0)
    }

    @Test("a clock near its epoch, or going back, is counted without trapping")
    func earlyClock() {
        var window = AdvertisementWindow()
        for milliseconds in [0, 3, 15_000, 9_000, 70_000] as [Int64] {
            window.count(withManufacturerData: true, attributed: false, at: Timestamp(milliseconds: milliseconds))
        }
        #expect(window.lastMinute(at: Timestamp(milliseconds: 70_000)).advertisements >= 1)
        #expect(window.lastMinute(at: Timestamp(milliseconds: 0)).advertisements >= 0)
    }

    @Test("at most 256 heard gateways; the names beyond are counted, not added")
    func bounded() {
        var tracker = Self.tracker()
        for index in 0..<300 { _ = tracker.seen("node-\(index)", through: 0, at: Self.at(0)) }
        #expect(tracker.heardCount == GatewayTracker.maximumHeardGateways)
        #expect(tracker.namesLeftOut == 44, "one for each message from a name left out")
        #expect(
            tracker.advertisement("node-299", through: 0, withManufacturerData: false, attributed: false, at: Self.at(1)).appeared.isEmpty)
        #expect(tracker.configured[0].totals.advertisements == 0, "a name left out counts nothing")
    }
}
