import AccessoryKit
import Bridge
import Configuration
import Dispatch
import JSON
import MQTT
import Synchronization
import Telemetry

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `aabridge report-sources`: runs on a Linux desktop, one of the *sources* accessories play
/// from, and tells the running bridge which of its accessories are connected to this computer
/// over Bluetooth. Real AirPods do not say which phone or laptop they play from; the computer
/// knows, and says it the way an accessory's firmware would: `source_connected` and
/// `source_disconnected` on `<base>/accessory/<ID>/set` (mqtt-api.md, docs/sources.md).
///
/// It polls `bluetoothctl` (``Bluetoothctl``) every `--interval` seconds and lets
/// ``SourceReporter`` decide what to send, for the accessories the bridge publishes in its
/// retained `bridge/accessories` and takes sources for. On SIGTERM or SIGINT it reports the
/// disconnection of everything it reported connected, within a bound, and exits 0.
///
/// Exit status: 0 when stopped by a signal (or, with `--once`, after one reconciliation), 1
/// when the broker, the bridge or bluetoothctl failed, 2 for a usage or configuration error
/// (an unknown option, a malformed `--source` or `--interval`, several controllers and no
/// `--source`).
enum ReportSourcesCommand {
    static let usage = """
        usage: aabridge report-sources [--config PATH] [--source ADDR] [--interval S] [--bluetoothctl PATH] [--once]

        Runs on a Linux desktop (a source) and tells the running bridge which of its accessories are
        connected to this computer, as bluetoothctl shows them: source_connected and source_disconnected
        on <base>/accessory/<ID>/set, for the accessories registered with audioSwitching. On SIGTERM or
        SIGINT it reports them disconnected, then exits 0 (docs/sources.md).

        \(CommandOption.helpLines(options))
        """

    static let options = [
        CommandOption("--config", value: "PATH", help: "the bridge's configuration, for its broker (default config/aabridge.yaml)"),
        CommandOption(
            "--source", value: "ADDR", help: "this computer's Bluetooth address (default: the controller bluetoothctl show names)"),
        CommandOption("--interval", value: "S", help: "seconds between two looks at bluetoothctl (default 5)"),
        CommandOption("--bluetoothctl", value: "PATH", help: "the bluetoothctl to run (default: bluetoothctl, found on PATH)"),
        CommandOption("--once", help: "report what is connected now (and take back what is not), then exit"),
    ]
    /// How long to wait for the retained `bridge/accessories`, which the broker sends right
    /// after the subscription is acknowledged.
    static let retainedTimeout: Duration = .seconds(3)
    /// How long the broker has to acknowledge what `--once` and the shutdown publish.
    static let publishTimeout: Duration = .seconds(5)
    /// The shutdown ends by then whatever happens: the last poll (bounded by
    /// ``Bluetoothctl/timeout``), the disconnections (``publishTimeout``), the MQTT goodbye.
    static let shutdownLimit: Duration = .seconds(15)

    /// What the user chose on the command line.
    struct Settings {
        var source: BluetoothAddress?
        var interval: Duration = .seconds(5)
        var bluetoothctl = "bluetoothctl"
        var once = false
    }

    struct Failure: Error {
        var status: Int32
        var message: String
    }

    static func run(options: CommandArguments) async -> Int32 {
        do {
            return try await report(options: options)
        } catch {
            printError("aabridge report-sources: \(error.message)")
            return error.status
        }
    }

    static func report(options: CommandArguments) async throws(Failure) -> Int32 {
        let settings = try parse(options)
        guard let configuration = Command.loadConfiguration(options) else { return ConfigurationErrors.exitStatus }
        // Caught before anything starts, so that a SIGTERM during the start is graceful too.
        let signals = settings.once ? nil : ShutdownSignals.stream()
        var bluetoothctl = Bluetoothctl(executable: settings.bluetoothctl)
        let source: BluetoothAddress
        if let given = settings.source { source = given } else { source = try await ownAddress(bluetoothctl) }

        let topics = Topics(base: configuration.mqtt.baseTopic)
        let mqtt: MQTTClient
        switch await CommandClient.connect(configuration, topics: topics, role: "report-sources") {
        case .success(let client): mqtt = client
        case .failure(let failure): throw Failure(status: 1, message: failure.message)
        }
        let bridge = CommandInbox()
        let reader = bridge.collect(mqtt.messages)
        defer { reader.cancel() }
        var reporter = SourceReporter(source: source)
        do throws(Failure) {
            let (generation, accessories, receivedAt) = try await retainedAccessories(mqtt: mqtt, topics: topics, bridge: bridge)
            reporter.bridgePublished(accessories, at: receivedAt)
            say(watchedLine(reporter.watched, source: source))
            let connected: Set<BluetoothAddress>
            do {
                let answer = try await bluetoothctl.connected(among: reporter.watchedAddresses)
                if let note = answer.note { say(note) }
                connected = answer.devices
            } catch {
                throw Failure(status: 1, message: error.message)
            }
            let changes = reporter.reconcile(connected: connected, at: now())
            if settings.once {
                try await publishAcknowledged(changes, source: source, topics: topics, mqtt: mqtt)
                if changes.isEmpty { say("nothing to report for \(source): the bridge already knows what is connected to it") }
                await mqtt.disconnect()
                return 0
            }
            for change in changes { publish(change, source: source, topics: topics, mqtt: mqtt) }
            reporter = await poll(
                reporter: reporter, bluetoothctl: bluetoothctl, source: source, topics: topics, mqtt: mqtt, bridge: bridge,
                seen: generation, interval: settings.interval, until: signals ?? AsyncStream { $0.finish() })
        } catch {
            await mqtt.disconnect()
            throw error
        }
        // Stopping: whatever happens from here, the process ends within the limit.
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(Int(shutdownLimit.components.seconds))) {
            printError("aabridge report-sources: the shutdown took longer than \(shutdownLimit.components.seconds) s; exiting")
            exit(0)
        }
        do {
            try await publishAcknowledged(reporter.disconnectAll(), source: source, topics: topics, mqtt: mqtt)
        } catch {
            printError("aabridge report-sources: \(error.message)")
        }
        await mqtt.disconnect()
        return 0
    }

    /// Subscribes to the bridge's retained `bridge/accessories` and returns its first
    /// publication: its generation, its accessories and when it arrived.
    static func retainedAccessories(
        mqtt: MQTTClient, topics: Topics, bridge: CommandInbox
    ) async throws(Failure) -> (Int, [SourceReporter.Accessory], Timestamp) {
        do {
            try await mqtt.subscribe(topics.bridgeAccessories)
        } catch {
            throw Failure(status: 1, message: "cannot subscribe to \(topics.bridgeAccessories): \(error.message)")
        }
        guard await bridge.wait(timeout: retainedTimeout, forAll: [topics.bridgeAccessories]),
            let published = bridge.latest(on: topics.bridgeAccessories)
        else {
            throw Failure(
                status: 1,
                message:
                    "no retained \(topics.bridgeAccessories): the bridge never ran against this broker (is --config the bridge's configuration?)"
            )
        }
        guard let accessories = ListedAccessory.list(published.message.payload) else {
            throw Failure(
                status: 1,
                message: "\(topics.bridgeAccessories) is not a JSON array: is the broker's \(topics.bridgeAccessories) aabridge's?")
        }
        return (published.sequence, accessories.map(\.reported), published.receivedAt)
    }

    /// The address bluetoothctl names for this computer's controller.
    static func ownAddress(_ bluetoothctl: Bluetoothctl) async throws(Failure) -> BluetoothAddress {
        let controllers: [BluetoothAddress]
        do {
            controllers = try await bluetoothctl.controllers()
        } catch {
            throw Failure(status: 1, message: error.message)
        }
        switch controllers.count {
        case 1: return controllers[0]
        case 0:
            throw Failure(
                status: 1, message: "'bluetoothctl show' names no controller (is there a Bluetooth adapter?); or give --source ADDR")
        default:
            throw Failure(
                status: 2,
                message:
                    "'bluetoothctl show' names \(controllers.count) controllers (\(controllers.map(\.description).joined(separator: ", "))): give this computer's address with --source ADDR"
            )
        }
    }

    // MARK: - Publishing

    /// The `/set` message a change sends, or nil.
    static func message(_ change: SourceReporter.Change, source: BluetoothAddress, topics: Topics) -> (topic: String, payload: [UInt8])? {
        guard let key = change.setKey else { return nil }
        let payload: JSONValue = .object([(key, .string(source.description))])
        return (topics.accessory(change.accessory.id) + "/set", payload.bytes)
    }

    /// Queues a change's message (QoS 1, not retained: kept and sent in order across a lost
    /// connection) and prints its line; the poller never waits for the broker.
    static func publish(_ change: SourceReporter.Change, source: BluetoothAddress, topics: Topics, mqtt: MQTTClient) {
        if case let (topic, payload)? = message(change, source: source, topics: topics) {
            mqtt.enqueue(topic: topic, payload: payload, qos: .atLeastOnce)
        }
        say(line(change, source: source))
    }

    /// Publishes the changes and waits until the broker has them, at most ``publishTimeout``
    /// in all (`--once` and the shutdown, after which nothing would send them).
    static func publishAcknowledged(
        _ changes: [SourceReporter.Change], source: BluetoothAddress, topics: Topics, mqtt: MQTTClient
    ) async throws(Failure) {
        let deadline = ContinuousClock.now + publishTimeout
        for change in changes {
            if case let (topic, payload)? = message(change, source: source, topics: topics) {
                let acknowledged = await acknowledgement(of: topic, payload, mqtt: mqtt, before: deadline)
                guard acknowledged else {
                    throw Failure(
                        status: 1,
                        message:
                            "the broker did not acknowledge \(topic) within \(publishTimeout.components.seconds) s: \(line(change, source: source)) was not reported"
                    )
                }
            }
            say(line(change, source: source))
        }
    }

    /// Whether the broker acknowledged the message before `deadline`. The wait is given up at
    /// the deadline (an acknowledgement cannot be cancelled; the client ends it when it
    /// disconnects).
    static func acknowledgement(
        of topic: String, _ payload: [UInt8], mqtt: MQTTClient, before deadline: ContinuousClock.Instant
    ) async
        -> Bool
    {
        let answered = FirstAnswer()
        return await withCheckedContinuation { continuation in
            Task {
                let sent = (try? await mqtt.publishAcknowledged(topic: topic, payload: payload, qos: .atLeastOnce)) != nil
                if answered.claim() { continuation.resume(returning: sent) }
            }
            Task {
                try? await Task.sleep(until: deadline)
                if answered.claim() { continuation.resume(returning: false) }
            }
        }
    }

    /// Which of two racing tasks answers a continuation: the first to claim it.
    final class FirstAnswer: Sendable {
        private let claimed = Atomic<Bool>(false)

        func claim() -> Bool { !claimed.exchange(true, ordering: .acquiringAndReleasing) }
    }

    // MARK: - Lines

    /// Writes one line to standard output at once (unbuffered): a pipe or journald sees each
    /// change as it happens, not when a buffer fills.
    static func say(_ line: String) {
        StandardStream.output.writeLine(line)
    }

    /// `connected A1:B2:C3:D4:E5:F6 (Alice's AirPods) to 11:22:33:44:55:66`.
    static func line(_ change: SourceReporter.Change, source: BluetoothAddress) -> String {
        let accessory = "\(change.accessory.id) (\(change.accessory.name))"
        switch change {
        case .connected: return "connected \(accessory) to \(source)"
        case .connectedAgain: return "connected \(accessory) to \(source) again (the bridge had dropped it)"
        case .disconnected: return "disconnected \(accessory) from \(source)"
        case .disconnectedStale: return "disconnected \(accessory) from \(source) (the bridge still listed it)"
        case .forgotten: return "no longer reporting \(accessory): the bridge no longer takes sources for it"
        }
    }

    /// Which accessories are watched: the user sees at once whether theirs is among them.
    static func watchedLine(_ watched: [SourceReporter.Accessory], source: BluetoothAddress) -> String {
        let names = watched.map { "\($0.id) (\($0.name))" }.joined(separator: ", ")
        return "reporting \(source)'s connections to "
            + (watched.isEmpty ? "no accessory yet (none is registered with audioSwitching)" : names)
    }

    // MARK: - Input

    static func parse(_ options: CommandArguments) throws(Failure) -> Settings {
        var settings = Settings()
        if let text = options["--source"] {
            guard let address = BluetoothAddress(text) else {
                throw Failure(status: 2, message: "--source '\(text)' is not a Bluetooth address (A1:B2:C3:D4:E5:F6)")
            }
            settings.source = address
        }
        if let text = options["--interval"] {
            guard let seconds = Double(text), seconds.isFinite, (0.1...3600).contains(seconds) else {
                throw Failure(status: 2, message: "--interval '\(text)' is not a number of seconds from 0.1 to 3600")
            }
            settings.interval = .milliseconds(Int((seconds * 1000).rounded()))
        }
        if let path = options["--bluetoothctl"] { settings.bluetoothctl = path }
        settings.once = options.has("--once")
        return settings
    }

    /// The reporter's clock: the commands' own (``CommandInbox/now()``).
    static func now() -> Timestamp { CommandInbox.now() }
}
