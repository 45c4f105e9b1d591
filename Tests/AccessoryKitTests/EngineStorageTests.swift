import Testing

@testable import AccessoryKit

/// The storage writes are everything the runtime needs to restart into the same state.
@Suite("Engine: storage writes, restore, time")
struct EngineStorageTests {
    let a = Fixtures.address(1), b = Fixtures.address(2), c = Fixtures.address(3)
    let phone = Fixtures.phone

    /// A fake store that applies writes the way the SQLite store will.
    struct Store {
        var accessories: [BluetoothAddress: Accessory] = [:]
        var registrations: [BluetoothAddress: Registration] = [:]
        var migrationComplete = false
        var keys: [BluetoothAddress: AccessoryKeys] = [:]
        var followed: [BluetoothAddress: BluetoothAddress] = [:]
        var homeSources: [BluetoothAddress: [BluetoothAddress]] = [:]
        var aliases: [BluetoothAddress: BluetoothAddress] = [:]
        var sourceNames: [BluetoothAddress: String] = [:]
        var traces: [BluetoothAddress: AccessoryTrace] = [:]

        mutating func apply(_ outputs: [EngineOutput]) {
            for case .storage(let write) in outputs {
                switch write {
                case .upsertAccessory(let accessory): accessories[accessory.id] = accessory
                case .deleteAccessory(let id):
                    accessories[id] = nil
                    keys[id] = nil
                    followed[id] = nil
                    homeSources[id] = nil
                    aliases[id] = nil
                    traces[id] = nil
                case .upsertRegistration(let id, let registration): registrations[id] = registration
                case .deleteRegistration(let id): registrations[id] = nil
                case .migrationComplete: migrationComplete = true
                case .saveKeys(let id, let new): keys[id] = new.isEmpty ? nil : new
                case .saveFollowedAddress(let id, let address): followed[id] = address
                case .saveHomeSources(let id, let sources): homeSources[id] = sources.isEmpty ? nil : sources
                case .saveAlias(let id, let alias): aliases[id] = alias
                case .saveSourceName(let source, let name): sourceNames[source] = name
                case .saveTrace(let id, let trace): traces[id] = trace
                }
            }
        }

        var restored: RestoredState {
            RestoredState(
                accessories: Array(accessories.values), registrations: registrations, migrationComplete: migrationComplete,
                keys: keys, followedAddresses: followed, homeSources: homeSources, aliases: aliases, sourceNames: sourceNames,
                traces: traces)
        }
    }

    @Test func storageWritesRestoreTheSameAccessoriesAndRegistrations() {
        let migrations = [MigrationItem(id: Fixtures.address(9), name: "Old buds", product: Fixtures.buds.name)]
        var harness = Harness(Fixtures.configuration(migrations: migrations))
        harness.pairAndRegister(a, Fixtures.buds, placement: .inEar, primary: phone)
        harness.pairAndRegister(b, Fixtures.basic, primary: Fixtures.laptop)
        harness.pair(c, Fixtures.studio, name: "ignored")
        harness.request(.rename(c, name: "Studio"))
        harness.report(a, .worn(false, hardware: nil))
        harness.request(.invalidate(b))
        harness.request(.remove(c))

        var store = Store()
        store.apply(harness.log)
        var restarted = Harness(Fixtures.configuration(migrations: migrations), restored: store.restored)
        #expect(restarted.engine.accessories == harness.engine.accessories)
        #expect(
            restarted.engine.registry.registrations
                == harness.engine.registry.registrations.filter { harness.engine.session.accessories[$0.key] != nil })
        #expect(restarted.engine.migrationComplete)
        // The restored engine behaves like the original.
        let on = restarted.report(a, .worn(true, hardware: nil))
        #expect(on.decisions.map(\.action) == [.route])
        #expect(restarted.report(b, .sourceConnected(phone)).errors.map(\.code) == [.invalidated])
    }

    @Test func anyGatewayKeepsAnAccessoryAvailable() {
        var harness = Harness()
        harness.pairAndRegister(a, Fixtures.buds, placement: .inEar, primary: phone)
        for gateway in ["hall", "office", "hall", "office"] {
            harness.now = harness.now.advanced(byMilliseconds: 60_000)
            harness.send(.sighting(Fixtures.sighting(a, for: Fixtures.buds, gateway: gateway)))
            #expect(harness.send(.tick).outputs.isEmpty)
        }
        #expect(harness.engine.status(of: a)?.available == true)
        #expect(harness.engine.route(for: phone) == .accessory(a))
    }

    @Test func nextDeadlineCoversPickerDebounceAndAvailability() {
        var harness = Harness(Fixtures.configuration(debounce: 500))
        #expect(harness.engine.nextDeadline == nil)
        harness.pairAndRegister(a, Fixtures.buds)
        let availabilityDue = harness.now.advanced(byMilliseconds: 120_001)
        #expect(harness.engine.nextDeadline == availabilityDue)
        harness.request(.showPicker(products: nil, timeout: .default))
        #expect(harness.engine.nextDeadline == harness.now.advanced(byMilliseconds: 30_000))
        harness.report(a, .worn(true, hardware: nil))
        #expect(harness.engine.nextDeadline == harness.now.advanced(byMilliseconds: 500))
    }

    @Test func ticksBeforeActivationOrAfterShutdownDoNothing() {
        var idle = Harness(activate: false)
        #expect(idle.advance(1_000_000).outputs.isEmpty)
        var harness = Harness()
        harness.pairAndRegister(a, Fixtures.buds, placement: .inEar, primary: phone)
        harness.send(.invalidate)
        #expect(harness.advance(1_000_000).outputs.isEmpty)
        #expect(harness.report(a, .worn(false, hardware: nil)).outputs.isEmpty)
    }
}
