import AccessoryKit
import Foundation
import Synchronization
import Testing
@testable import Bridge
import MQTT
import Storage
import TestSupport

/// A wall clock whose time can jump (NTP corrections, an RTC-less box setting its clock after
/// boot), injected into ``BridgeRuntime`` through its `clock:` parameter.
final class JumpingClock: Sendable {
    private let offset = Mutex<Int64>(0)

    /// Moves the clock by `milliseconds` (negative: backwards).
    func jump(byMilliseconds milliseconds: Int64) { offset.withLock { $0 += milliseconds } }

    var now: @Sendable () -> Timestamp {
        { [self] in BridgeClock.now().advanced(byMilliseconds: offset.withLock { $0 }) }
    }
}

/// One in-process runtime with an injected clock and any configuration (BridgeHarness starts
/// its own configuration with the real clock).
final class ClockedBridge {
    let configuration: BridgeConfiguration
    let databasePath: String
    let clock = JumpingClock()
    private var runtime: BridgeRuntime?
    private var task: Task<Int32, Never>?

    init(harness: BridgeHarness) {
        configuration = harness.configuration
        databasePath = harness.databasePath
    }

    init(configuration: BridgeConfiguration, databasePath: String) {
        self.configuration = configuration
        self.databasePath = databasePath
    }

    /// Starts the runtime; waits for `bridge/state` online unless `waitOnline` is false.
    func start(observer: Observer, waitOnline: Bool = true) async throws {
        let store = try AccessoryStore(path: databasePath)
        let runtime = try BridgeRuntime(configuration: configuration, store: store, clock: clock.now)
        nonisolated(unsafe) let unsafeRuntime = runtime
        self.runtime = runtime
        task = Task { await unsafeRuntime.run(signals: nil) }
        guard waitOnline else { return }
        let online = await observer.messages.wait(timeout: .seconds(30)) { elements in
            elements.contains { $0.topic == "aabridge/bridge/state" && $0.payloadString == #"{"state":"online"}"# }
        }
        guard online else { throw BrokerError("the bridge did not come online") }
    }

    @discardableResult
    func stop() async -> Int32? {
        guard let runtime, let task else { return nil }
        self.runtime = nil
        self.task = nil
        runtime.stop()
        return await task.value
    }
}

/// Like ``withBridge``, with the runtime's clock in the test's hands.
func withClockedBridge(debounceMilliseconds: Int = 0, availabilityTimeoutSeconds: Int = 120,
                       _ body: (ClockedBridge, Observer) async throws -> Void) async throws {
    let harness = try BridgeHarness(debounceMilliseconds: debounceMilliseconds,
                                    availabilityTimeoutSeconds: availabilityTimeoutSeconds)
    defer { harness.removeDirectory() }
    let bridge = ClockedBridge(harness: harness)
    let observer = try await Observer(broker: harness.broker)
    try await bridge.start(observer: observer)
    do {
        try await body(bridge, observer)
    } catch {
        await bridge.stop()
        await observer.disconnect()
        throw error
    }
    let status = await bridge.stop()
    #expect(status == 0)
    await observer.disconnect()
}
