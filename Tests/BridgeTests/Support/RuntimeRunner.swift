import AccessoryKit
import Configuration
import Foundation
import MQTT
import Storage
import TestSupport

@testable import Bridge

/// Runs one ``BridgeRuntime`` in the test process on a configuration and a database: the
/// part that ``BridgeHarness`` (its own configuration, the wall clock) and ``ClockedBridge``
/// (any configuration, an injected clock) share.
final class RuntimeRunner {
    let configuration: BridgeConfiguration
    let databasePath: String
    private var runtime: BridgeRuntime?
    private var task: Task<Int32, Never>?
    /// The running runtime's MQTT client and entrance, for tests that watch its queue or
    /// must feed it while the broker is frozen.
    private(set) var client: MQTTClient?
    private(set) var inbox: RuntimeInbox?
    /// The running runtime's store (to count its transactions).
    private(set) var store: AccessoryStore?
    /// Opens another store instead of the SQLite file at `databasePath` (PostgreSQL).
    var openStore: (() throws -> any AccessoryStorage)?

    init(configuration: BridgeConfiguration, databasePath: String) {
        self.configuration = configuration
        self.databasePath = databasePath
    }

    /// Opens the store and starts the runtime; waits for `bridge/state` online unless
    /// `waitOnline` is false.
    /// `prepare` adjusts the runtime (an internal bound) before it runs.
    func start(
        observer: Observer, clock: @escaping @Sendable () -> Timestamp, waitOnline: Bool = true,
        prepare: (BridgeRuntime) -> Void = { _ in }
    ) async throws {
        let store = try openStore?() ?? AccessoryStore(path: databasePath)
        let runtime = try BridgeRuntime(configuration: configuration, store: store, clock: clock)
        prepare(runtime)
        client = runtime.connection as? MQTTClient
        inbox = runtime.inbox
        self.store = store as? AccessoryStore
        // The runtime is driven by its own task; the test only calls stop() on it, which
        // just yields into the runtime's event stream (thread-safe).
        nonisolated(unsafe) let unsafeRuntime = runtime
        self.runtime = runtime
        task = Task { await unsafeRuntime.run(signals: nil) }
        guard waitOnline else { return }
        let online = await observer.messages.wait(timeout: .seconds(30)) { elements in
            elements.contains { $0.topic == "aabridge/bridge/state" && $0.payloadString == #"{"state":"online"}"# }
        }
        guard online else { throw BrokerError("the bridge did not come online") }
    }

    /// Waits at most `timeout` for the runtime to end by itself (without ``stop()``) and
    /// returns its exit status; nil when it still runs.
    func ended(within timeout: Duration) async -> Int32? {
        guard let task else { return nil }
        guard await Deadline.run(timeout, { _ = await task.value }) else { return nil }
        return await task.value
    }

    /// Stops the runtime cleanly and returns its exit status (nil when it was not running).
    @discardableResult
    func stop() async -> Int32? {
        guard let runtime, let task else { return nil }
        self.runtime = nil
        self.task = nil
        runtime.stop()
        return await task.value
    }
}
