import AccessoryKit
import Testing

@testable import Telemetry

/// What a desktop reports about its Bluetooth connections, from bluetoothctl's answers and the
/// bridge's published state.
@Suite struct SourceReporterTests {
    static let desktop = BluetoothAddress("66:55:44:33:22:11")!
    static let phone = BluetoothAddress("11:22:33:44:55:66")!
    static let airPods = BluetoothAddress("A1:B2:C3:D4:E5:F6")!
    static let speaker = BluetoothAddress("C1:B2:C3:D4:E5:F6")!
    static let headphones = BluetoothAddress("B1:B2:C3:D4:E5:F6")!
    static let keyboard = BluetoothAddress("00:11:22:33:44:55")!

    static func accessory(
        _ id: BluetoothAddress, _ name: String, takesSources: Bool = true, available: Bool = true,
        primary: BluetoothAddress? = nil, secondary: BluetoothAddress? = nil
    ) -> SourceReporter.Accessory {
        .init(id: id, name: name, takesSources: takesSources, available: available, primarySource: primary, secondarySource: secondary)
    }

    static var bridge: [SourceReporter.Accessory] {
        [
            accessory(airPods, "Alice's AirPods"), accessory(speaker, "Kitchen Speaker"),
            accessory(headphones, "Bob's Headphones", takesSources: false),
        ]
    }

    static func label(_ id: BluetoothAddress, _ name: String) -> SourceReporter.Label { .init(id: id, name: name) }

    /// A time, in seconds on the reporter's clock.
    static func at(_ seconds: Double) -> Timestamp { Timestamp(milliseconds: Int64(seconds * 1000)) }

    @Test("nothing is said before the bridge's accessories are known")
    func waitsForTheBridge() {
        var reporter = SourceReporter(source: Self.desktop)
        #expect(reporter.reconcile(connected: [Self.airPods], at: Self.at(0)).isEmpty)
        #expect(reporter.watched.isEmpty)
    }

    @Test("connected: only accessories the bridge takes sources for, in address order; each once")
    func connects() {
        var reporter = SourceReporter(source: Self.desktop)
        reporter.bridgePublished(Self.bridge, at: Self.at(0))
        #expect(reporter.watched.map(\.id) == [Self.airPods, Self.speaker])
        let changes = reporter.reconcile(connected: [Self.speaker, Self.keyboard, Self.headphones, Self.airPods], at: Self.at(0))
        #expect(
            changes == [.connected(Self.label(Self.airPods, "Alice's AirPods")), .connected(Self.label(Self.speaker, "Kitchen Speaker"))])
        #expect(changes.map(\.setKey) == ["source_connected", "source_connected"])
        #expect(reporter.reconcile(connected: [Self.speaker, Self.keyboard, Self.headphones, Self.airPods], at: Self.at(0)).isEmpty)
        #expect(Set(reporter.reported.keys) == [Self.airPods, Self.speaker])
    }

    @Test("a connection the bridge already lists (a second --once, a restart) needs no message, and is taken back when it ends")
    func alreadyListed() {
        var reporter = SourceReporter(source: Self.desktop)
        reporter.bridgePublished(
            [Self.accessory(Self.speaker, "Kitchen Speaker", primary: Self.phone, secondary: Self.desktop)], at: Self.at(0))
        #expect(reporter.reconcile(connected: [Self.speaker], at: Self.at(0)).isEmpty)
        #expect(reporter.reported.keys.contains(Self.speaker))
        #expect(reporter.reconcile(connected: [], at: Self.at(0)) == [.disconnected(Self.label(Self.speaker, "Kitchen Speaker"))])
        // Connected again before the bridge's answer to the disconnection arrived: the state
        // that still lists it is older than the message, so the connection is sent.
        #expect(
            reporter.reconcile(connected: [Self.speaker], at: Self.at(0.2)) == [.connected(Self.label(Self.speaker, "Kitchen Speaker"))])
    }

    @Test func disconnects() {
        var reporter = SourceReporter(source: Self.desktop)
        reporter.bridgePublished(Self.bridge, at: Self.at(0))
        _ = reporter.reconcile(connected: [Self.airPods, Self.speaker], at: Self.at(0))
        #expect(
            reporter.reconcile(connected: [Self.speaker], at: Self.at(0)) == [.disconnected(Self.label(Self.airPods, "Alice's AirPods"))])
        #expect(reporter.reconcile(connected: [Self.speaker], at: Self.at(0)).isEmpty)
        #expect(
            reporter.reconcile(connected: [Self.airPods, Self.speaker], at: Self.at(0)) == [
                .connected(Self.label(Self.airPods, "Alice's AirPods"))
            ])
    }

    @Test("the bridge registers an accessory that is already connected: reported then")
    func registeredLater() {
        var reporter = SourceReporter(source: Self.desktop)
        reporter.bridgePublished(Self.bridge, at: Self.at(0))
        #expect(reporter.reconcile(connected: [Self.headphones], at: Self.at(0)).isEmpty)
        var registered = Self.bridge
        registered[2].takesSources = true
        reporter.bridgePublished(registered, at: Self.at(0))
        #expect(
            reporter.reconcile(connected: [Self.headphones], at: Self.at(0)) == [
                .connected(Self.label(Self.headphones, "Bob's Headphones"))
            ])
    }

    @Test("an accessory the bridge removed or stopped taking sources for is forgotten, without a message")
    func forgotten() {
        var reporter = SourceReporter(source: Self.desktop)
        reporter.bridgePublished(Self.bridge, at: Self.at(0))
        _ = reporter.reconcile(connected: [Self.airPods, Self.speaker], at: Self.at(0))
        var invalidated = Self.bridge
        invalidated[0].takesSources = false
        reporter.bridgePublished(invalidated.filter { $0.id != Self.speaker }, at: Self.at(0))
        let changes = reporter.reconcile(connected: [Self.airPods, Self.speaker], at: Self.at(0))
        #expect(
            changes == [.forgotten(Self.label(Self.airPods, "Alice's AirPods")), .forgotten(Self.label(Self.speaker, "Kitchen Speaker"))])
        #expect(changes.allSatisfy { $0.setKey == nil })
        #expect(reporter.reported.isEmpty)
    }

    @Test("the bridge lost the connection (it cleared the sources while nobody heard the accessory): said again once it is heard")
    func connectedAgain() {
        var reporter = SourceReporter(source: Self.desktop)
        let speaker = Self.label(Self.speaker, "Kitchen Speaker")
        reporter.bridgePublished(Self.bridge, at: Self.at(0))
        #expect(reporter.reconcile(connected: [Self.speaker], at: Self.at(1)) == [.connected(speaker)])
        reporter.bridgePublished([Self.accessory(Self.speaker, "Kitchen Speaker", primary: Self.desktop)], at: Self.at(1.01))
        #expect(reporter.reconcile(connected: [Self.speaker], at: Self.at(6)).isEmpty)
        // Unheard: the bridge cleared its sources. Nothing to say while it cannot be routed.
        reporter.bridgePublished([Self.accessory(Self.speaker, "Kitchen Speaker", available: false)], at: Self.at(100))
        #expect(reporter.reconcile(connected: [Self.speaker], at: Self.at(101)).isEmpty)
        // Heard again, without this source.
        reporter.bridgePublished([Self.accessory(Self.speaker, "Kitchen Speaker")], at: Self.at(200))
        #expect(reporter.reconcile(connected: [Self.speaker], at: Self.at(201)) == [.connectedAgain(speaker)])
        // The same state again is no news: the message sent cannot show in it.
        #expect(reporter.reconcile(connected: [Self.speaker], at: Self.at(206)).isEmpty)
        reporter.bridgePublished([Self.accessory(Self.speaker, "Kitchen Speaker", primary: Self.desktop)], at: Self.at(201.01))
        #expect(reporter.reconcile(connected: [Self.speaker], at: Self.at(211)).isEmpty)
    }

    @Test(
        "a state contradicting a message is believed only when received well after it: sooner it may predate the message, or refuse it"
    )
    func settleTime() {
        var reporter = SourceReporter(source: Self.desktop)
        let speaker = Self.label(Self.speaker, "Kitchen Speaker")
        reporter.bridgePublished([Self.accessory(Self.speaker, "Kitchen Speaker")], at: Self.at(0))
        #expect(reporter.reconcile(connected: [Self.speaker], at: Self.at(10)) == [.connected(speaker)])
        // No new state: nothing, however often it is asked.
        for poll in 1...3 { #expect(reporter.reconcile(connected: [Self.speaker], at: Self.at(10 + 5 * Double(poll))).isEmpty) }
        // Published before the bridge handled the message, or published because it refused it
        // (an error): not believed, so not answered with the same message at every poll.
        reporter.bridgePublished([Self.accessory(Self.speaker, "Kitchen Speaker")], at: Self.at(11.9))
        #expect(reporter.reconcile(connected: [Self.speaker], at: Self.at(30)).isEmpty)
        // Received later, it is the bridge's word: the message again, once per such state.
        reporter.bridgePublished([Self.accessory(Self.speaker, "Kitchen Speaker")], at: Self.at(12))
        #expect(reporter.reconcile(connected: [Self.speaker], at: Self.at(31)) == [.connectedAgain(speaker)])
        #expect(reporter.reconcile(connected: [Self.speaker], at: Self.at(36)).isEmpty)
    }

    @Test("both source slots taken by others: whether the bridge still has this one cannot be seen, so it is not said again")
    func bothSlotsTaken() {
        var reporter = SourceReporter(source: Self.desktop)
        let full = Self.accessory(Self.speaker, "Kitchen Speaker", primary: Self.phone, secondary: Self.keyboard)
        reporter.bridgePublished([full], at: Self.at(0))
        #expect(reporter.reconcile(connected: [Self.speaker], at: Self.at(1)).count == 1)
        reporter.bridgePublished([full], at: Self.at(60))
        #expect(reporter.reconcile(connected: [Self.speaker], at: Self.at(61)).isEmpty)
    }

    @Test("the bridge still lists this source for an accessory that is not connected (a reporter killed before): taken back")
    func staleConnection() {
        var reporter = SourceReporter(source: Self.desktop)
        let stale = [
            Self.accessory(Self.airPods, "Alice's AirPods", primary: Self.phone, secondary: Self.desktop),
            Self.accessory(Self.speaker, "Kitchen Speaker", available: false, primary: Self.desktop),
            Self.accessory(Self.headphones, "Bob's Headphones", primary: Self.phone),
        ]
        reporter.bridgePublished(stale, at: Self.at(0))
        let changes = reporter.reconcile(connected: [], at: Self.at(1))
        #expect(
            changes == [
                .disconnectedStale(Self.label(Self.airPods, "Alice's AirPods")),
                .disconnectedStale(Self.label(Self.speaker, "Kitchen Speaker")),
            ])
        #expect(changes.map(\.setKey) == ["source_disconnected", "source_disconnected"])
        #expect(reporter.reconcile(connected: [], at: Self.at(6)).isEmpty)
        #expect(reporter.reported.isEmpty)
        // Still listed in a state received long after: said again.
        reporter.bridgePublished(stale, at: Self.at(10))
        #expect(reporter.reconcile(connected: [], at: Self.at(11)).count == 2)
    }

    @Test("stopping takes back everything reported connected; forgotten ones are only named")
    func disconnectAll() {
        var reporter = SourceReporter(source: Self.desktop)
        reporter.bridgePublished(Self.bridge, at: Self.at(0))
        _ = reporter.reconcile(connected: [Self.airPods, Self.speaker], at: Self.at(0))
        reporter.bridgePublished(Self.bridge.filter { $0.id != Self.airPods }, at: Self.at(0))
        #expect(
            reporter.disconnectAll() == [
                .forgotten(Self.label(Self.airPods, "Alice's AirPods")), .disconnected(Self.label(Self.speaker, "Kitchen Speaker")),
            ])
        #expect(reporter.disconnectAll().isEmpty)
    }
}
