import AccessoryKit
import Configuration
import Foundation
import MQTT
import Storage
import Synchronization
import TestSupport
import Testing

@testable import Bridge

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
    let clock = JumpingClock()
    private let runner: RuntimeRunner
    var configuration: BridgeConfiguration { runner.configuration }
    var databasePath: String { runner.databasePath }

    convenience init(harness: BridgeHarness) {
        self.init(configuration: harness.configuration, databasePath: harness.databasePath)
    }

    init(configuration: BridgeConfiguration, databasePath: String) {
        runner = RuntimeRunner(configuration: configuration, databasePath: databasePath)
    }

    /// Starts the runtime; waits for `bridge/state` online unless `waitOnline` is false.
    func start(observer: Observer, waitOnline: Bool = true) async throws {
        try await runner.start(observer: observer, clock: clock.now, waitOnline: waitOnline)
    }

    @discardableResult
    func stop() async -> Int32? { await runner.stop() }
}

/// Like ``withBridge``, with the runtime's clock in the test's hands.
func withClockedBridge(
    debounceMilliseconds: Int = 0, availabilityTimeoutSeconds: Int = 120,
    _ body: (ClockedBridge, Observer) async throws -> Void
) async throws {
    let harness = try BridgeHarness(
        debounceMilliseconds: debounceMilliseconds,
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
