import AccessoryKit
import Testing

@testable import Storage

/// The engine's real storage outputs, committed through the SQLite store and loaded into a
/// new engine, give back the same accessories and registrations.
@Suite("Engine outputs through the store: a restart restores the same state")
struct EngineRoundTripTests {
    static let a = BluetoothAddress("A1:B2:C3:D4:00:01")!
    static let b = BluetoothAddress("A1:B2:C3:D4:00:02")!
    static let c = BluetoothAddress("A1:B2:C3:D4:00:03")!
    static let phone = BluetoothAddress("11:22:33:44:55:66")!

    static let configuration = EngineConfiguration(
        products: [
            Product(
                name: "Buds", hardware: .inEarBud, capabilities: [.audioSwitching, .placement], autoRegister: true,
                descriptor: DiscoveryDescriptor(
                    bluetoothCompanyIdentifier: 0x004C, bluetoothManufacturerDataBlob: [0x07], bluetoothManufacturerDataMask: [0xFF])),
            Product(
                name: "Basic", hardware: .onEarHeadphone, capabilities: [.audioSwitching],
                descriptor: DiscoveryDescriptor(bluetoothCompanyIdentifier: 0x0A12)),
        ],
        declaration: SetupDeclaration(supports: [.bluetooth], bluetoothCompanyIdentifiers: [0x004C, 0x0A12]),
        migrations: [
            MigrationItem(id: a, name: "Old buds", product: "Buds"),
            MigrationItem(id: b, name: "Headphones", product: "Basic"),
            MigrationItem(id: c, name: "Spare", product: "Basic"),
        ])

    /// Feeds `input` and commits the step's storage writes, as the bridge does before it answers.
    static func step(_ engine: inout BridgeEngine, _ input: EngineInput, at now: Timestamp, store: AccessoryStore) throws -> EngineStep {
        let step = engine.handle(input, at: now)
        let writes = step.outputs.compactMap { output -> StorageWrite? in
            if case .storage(let write) = output { write } else { nil }
        }
        try store.apply(writes)
        return step
    }

    @Test("migration, registration, rename, invalidation and removal survive a restart")
    func restart() throws {
        let directory = TemporaryDirectory()
        let path = directory.database()
        var now = Timestamp(milliseconds: 1_700_000_000_000)
        var engine = BridgeEngine(configuration: Self.configuration)
        do {
            let store = try AccessoryStore(path: path)
            _ = try Self.step(&engine, .activate, at: now, store: store)
            now = now.advanced(byMilliseconds: 1000)
            let registered = try Self.step(
                &engine,
                .request(
                    .register(Self.b, RegistrationRequest(capabilities: [.audioSwitching], primarySource: Self.phone)), role: .container),
                at: now, store: store)
            #expect(registered.outputs.contains { if case .storage(.upsertRegistration) = $0 { true } else { false } })
            _ = try Self.step(&engine, .request(.rename(Self.a, name: "Anna's buds"), role: .container), at: now, store: store)
            _ = try Self.step(&engine, .request(.invalidate(Self.b), role: .container), at: now, store: store)
            _ = try Self.step(&engine, .request(.remove(Self.c), role: .container), at: now, store: store)
            store.close()
        }
        #expect(engine.accessories.count == 2)
        #expect(!engine.registry.registrations.isEmpty)

        let store = try AccessoryStore(path: path)
        let restored = try store.load()
        #expect(restored.migrationComplete)
        var restarted = BridgeEngine(configuration: Self.configuration, restored: restored)
        // Accessories are valid only after activation; the migration does not run again.
        let activated = try Self.step(&restarted, .activate, at: now.advanced(byMilliseconds: 1000), store: store)
        #expect(!activated.outputs.contains { $0 == .storage(.migrationComplete) })
        #expect(restarted.accessories == engine.accessories)
        #expect(
            restarted.registry.registrations
                == engine.registry.registrations.filter { id, _ in engine.accessories.contains { $0.id == id } })
        #expect(restored.accessories.first { $0.id == Self.a }?.displayName == "Anna's buds")
        #expect(restored.registrations[Self.b]?.isInvalidated == true)
        #expect(try store.load() == restored)
    }

    @Test("a registration with headTracking and audioSpatialization survives a restart; its session does not (it starts inactive)")
    func headTrackingRestart() throws {
        let spatial = Product(
            name: "Spatial", hardware: .inEarBud, capabilities: [.audioSwitching, .headTracking, .audioSpatialization],
            descriptor: DiscoveryDescriptor(bluetoothCompanyIdentifier: 0x0A12))
        let configuration = EngineConfiguration(
            products: [spatial], declaration: SetupDeclaration(supports: [.bluetooth], bluetoothCompanyIdentifiers: [0x0A12]),
            migrations: [MigrationItem(id: Self.a, name: "Spatial", product: "Spatial")])
        let directory = TemporaryDirectory()
        let path = directory.database()
        let now = Timestamp(milliseconds: 1_700_000_000_000)
        var engine = BridgeEngine(configuration: configuration)
        do {
            let store = try AccessoryStore(path: path)
            _ = try Self.step(&engine, .activate, at: now, store: store)
            let registered = try Self.step(
                &engine,
                .request(.register(Self.a, RegistrationRequest(capabilities: [.headTracking, .audioSpatialization])), role: .container),
                at: now, store: store)
            #expect(registered.result == .success(.configuration(.init(deviceCapabilities: [.headTracking, .audioSpatialization]))))
            let on = try Self.step(&engine, .request(.setHeadTracking(Self.a, active: true), role: .container), at: now, store: store)
            #expect(!on.outputs.contains { if case .storage = $0 { true } else { false } })
            #expect(engine.status(of: Self.a)?.headTracking == .active)
            store.close()
        }
        let store = try AccessoryStore(path: path)
        var restarted = BridgeEngine(configuration: configuration, restored: try store.load())
        _ = try Self.step(&restarted, .activate, at: now, store: store)
        #expect(restarted.registry[Self.a]?.configuration.deviceCapabilities == [.headTracking, .audioSpatialization])
        #expect(restarted.status(of: Self.a)?.headTracking == .inactive)
    }
}
