import AccessoryKit

/// Engine throughput: advertisement sightings and accessory reports against 10,000
/// registered accessories, one core, no I/O. Inputs are built before timing so the
/// figure is the engine's, not the allocator's.
enum CoreBenchmark {
    static let accessoryCount = 10_000
    static let sourceCount = 100
    static let rounds = 5
    static let inputsPerRound = 1_000_000

    static func run() async throws {
        let product = Product(
            name: "Bench Buds", hardware: .inEarBud, capabilities: [.audioSwitching, .placement],
            descriptor: DiscoveryDescriptor(bluetoothCompanyIdentifier: 0x004C))
        let configuration = EngineConfiguration(
            products: [product],
            declaration: SetupDeclaration(supports: [.bluetooth], bluetoothCompanyIdentifiers: [0x004C]),
            switching: SwitchingSettings(placementDebounceMilliseconds: 500, availabilityTimeoutSeconds: 120, immediateRSSI: -50))

        let ids = (0..<accessoryCount).map { BluetoothAddress(rawValue: 0xA1B2_0000_0000 | UInt64($0)) }
        let sources = (0..<sourceCount).map { BluetoothAddress(rawValue: 0x1122_0000_0000 | UInt64($0)) }
        var registrations: [BluetoothAddress: Registration] = [:]
        let accessories = ids.enumerated().map { index, id in
            registrations[id] = Registration(
                configuration: .init(
                    devicePlacement: .offHead, deviceCapabilities: [.audioSwitching, .placement],
                    primaryAudioSourceDeviceIdentifier: sources[index % sourceCount]))
            return Accessory(
                id: id, displayName: "Buds \(index)", product: product.name, descriptor: product.descriptor, state: .authorized)
        }
        var engine = BridgeEngine(
            configuration: configuration,
            restored: RestoredState(accessories: accessories, registrations: registrations, migrationComplete: true))
        var now = Timestamp(milliseconds: 1_800_000_000_000)
        _ = engine.handle(.activate, at: now)

        // A repeating workload: mostly sightings (some unknown addresses, some with a decoded
        // wear reading), plus native telemetry reports (rssi, wear, source changes).
        var rng = BenchRandom(seed: 42)
        let gateways = ["kitchen", "hall", "office"]
        let manufacturer = ManufacturerData(companyIdentifier: 0x004C, payload: [0x07, 0x19, 0x01])
        var workload: [EngineInput] = []
        workload.reserveCapacity(100_000)
        for _ in 0..<100_000 {
            let id = ids[Int(rng.next() % UInt64(accessoryCount))]
            let gateway = gateways[Int(rng.next() % 3)]
            switch rng.next() % 100 {
            case 0..<60:
                workload.append(
                    .sighting(AdvertisementSighting(gateway: gateway, accessoryID: id, rssi: -60, manufacturerData: manufacturer)))
            case 60..<70:
                let unknown = BluetoothAddress(rawValue: 0xFFEE_0000_0000 | (rng.next() & 0xFFFF))
                workload.append(
                    .sighting(AdvertisementSighting(gateway: gateway, accessoryID: unknown, rssi: -80, manufacturerData: manufacturer)))
            case 70..<80:
                workload.append(
                    .sighting(
                        AdvertisementSighting(
                            gateway: gateway, accessoryID: id, rssi: -55, manufacturerData: manufacturer,
                            decoded: .init(worn: rng.next() % 2 == 0))))
            case 80..<90:
                workload.append(.report(AccessoryReport(accessory: id, gateway: gateway, changes: [.rssi(-50)])))
            case 90..<96:
                workload.append(
                    .report(AccessoryReport(accessory: id, gateway: gateway, changes: [.worn(rng.next() % 2 == 0, hardware: nil)])))
            default:
                let source = sources[Int(rng.next() % UInt64(sourceCount))]
                workload.append(
                    .report(
                        AccessoryReport(
                            accessory: id, gateway: gateway,
                            changes: [rng.next() % 2 == 0 ? .sourceConnected(source) : .sourceDisconnected(source)])))
            }
        }

        // Rounds, because the machine is shared: the best round is the engine's speed, the
        // median shows how much the neighbours cost. Both are printed.
        var outputs = 0
        var decisions = 0
        var cursor = 0
        var rates: [Double] = []
        let clock = ContinuousClock()
        for _ in 0..<rounds {
            let start = clock.now
            for _ in 0..<inputsPerRound {
                // Virtual time: 1 ms per 1,000 inputs, with a tick each virtual millisecond so
                // debounced placements commit during the run.
                if cursor % 1_000 == 0 {
                    now = now.advanced(byMilliseconds: 1)
                    let step = engine.handle(.tick, at: now)
                    outputs += step.outputs.count
                    for output in step.outputs { if case .decision = output { decisions += 1 } }
                }
                let step = engine.handle(workload[cursor % workload.count], at: now)
                outputs += step.outputs.count
                for output in step.outputs { if case .decision = output { decisions += 1 } }
                cursor += 1
            }
            let elapsed = clock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            rates.append(Double(inputsPerRound) / seconds)
        }
        let sorted = rates.sorted()
        let best = sorted.last ?? 0
        let median = sorted[sorted.count / 2]

        print("core.inputs_per_s \(Int(best)) inputs/s")
        print(
            "core: \(rounds) rounds of \(inputsPerRound) inputs (80% sightings incl. 10% unknown addresses and 10% with a wear reading, 20% reports) "
                + "against \(accessoryCount) registered accessories, one core: best \(Int(best)) inputs/s, median \(Int(median)) inputs/s "
                + "(\(format3(1e9 / best)) ns/input); \(outputs) outputs, \(decisions) decisions, \(engine.routes.count) sources routed at the end"
        )
    }

    private static func format3(_ value: Double) -> String {
        let thousandths = Int((value * 1000).rounded())
        guard thousandths >= 0 else { return "?" }
        let fraction = String(thousandths % 1000)
        return "\(thousandths / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}

/// SplitMix64, so the workload is the same on every run.
struct BenchRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
