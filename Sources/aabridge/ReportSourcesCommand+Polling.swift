import AccessoryKit
import Configuration
import MQTT
import Telemetry

extension ReportSourcesCommand {
    /// Looks at bluetoothctl every `interval` and sends what changed, until the first signal;
    /// returns the reporter as it then stands (what it reported connected). The poll runs in a
    /// task of its own, cancelled by the signal: its sleep ends at once, a bluetoothctl call in
    /// progress within ``Bluetoothctl/timeout``.
    static func poll(
        reporter: SourceReporter, bluetoothctl: Bluetoothctl, source: BluetoothAddress, topics: Topics, mqtt: MQTTClient,
        bridge: CommandInbox, seen generation: Int, interval: Duration, until signals: AsyncStream<Int32>
    ) async -> SourceReporter {
        let loop = Task { () -> SourceReporter in
            var reporter = reporter
            var bluetoothctl = bluetoothctl
            var generation = generation
            var watched = reporter.watchedAddresses
            var failing = false
            while true {
                try? await Task.sleep(for: interval)
                if Task.isCancelled { break }
                // The bridge's latest state, read at each poll only: what it changes is answered
                // at the poll's pace, never message by message.
                if let published = bridge.latest(on: topics.bridgeAccessories, after: generation) {
                    generation = published.sequence
                    if let accessories = ListedAccessory.list(published.message.payload) {
                        reporter.bridgePublished(accessories.map(\.reported), at: published.receivedAt)
                        if reporter.watchedAddresses != watched {
                            watched = reporter.watchedAddresses
                            say(watchedLine(reporter.watched, source: source))
                        }
                    }
                }
                do throws(Bluetoothctl.Failure) {
                    let answer = try await bluetoothctl.connected(among: watched)
                    // Stopping: what is reported connected is taken back by the shutdown.
                    if Task.isCancelled { break }
                    if let note = answer.note { say(note) }
                    if failing {
                        say("bluetoothctl answers again")
                        failing = false
                    }
                    for change in reporter.reconcile(connected: answer.devices, at: now()) {
                        publish(change, source: source, topics: topics, mqtt: mqtt)
                    }
                } catch {
                    // bluetoothd restarting, an adapter unplugged: said once, and the last
                    // reported state stands until bluetoothctl answers again.
                    if !failing { printError("aabridge report-sources: \(error.message); reporting nothing until it answers again") }
                    failing = true
                }
            }
            return reporter
        }
        for await _ in signals { break }
        loop.cancel()
        return await loop.value
    }
}
