import TestSupport
import Testing

@testable import AccessoryKit

/// Random input sequences (seeded SplitMix64) against invariants that must hold after every step.
@Suite("Properties over random input sequences")
struct PropertyTests {
    static let accessories = (1...4).map { Fixtures.address(UInt64($0)) }
    static let sources = [Fixtures.phone, Fixtures.laptop, Fixtures.tv]
    static let products = [Fixtures.buds, Fixtures.studio, Fixtures.basic]

    /// One random input, with how far the clock moves first.
    static func randomInput(_ rng: inout SplitMix64) -> (advance: Int64, input: EngineInput) {
        let id = accessories.randomElement(using: &rng)!
        let source = sources.randomElement(using: &rng)!
        let product = products[Int(id.rawValue & 0xFF) % products.count]
        let advance: Int64 = [0, 0, 10, 100, 300, 600, 5_000, 130_000].randomElement(using: &rng)!
        let input: EngineInput
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<12:
            input = .report(AccessoryReport(accessory: id, gateway: "gw", changes: [.worn(Bool.random(using: &rng), hardware: nil)]))
        case 12..<18:
            input = .report(
                AccessoryReport(
                    accessory: id, gateway: nil,
                    changes: [.placement(AccessoryControlDevice.Placement.allCases.randomElement(using: &rng)!)]))
        case 18..<28: input = .report(AccessoryReport(accessory: id, gateway: "gw", changes: [.sourceConnected(source)]))
        case 28..<34: input = .report(AccessoryReport(accessory: id, gateway: "gw", changes: [.sourceDisconnected(source)]))
        case 34..<38: input = .report(AccessoryReport(accessory: id, gateway: "gw", changes: [.preferredSource(source)]))
        case 38..<42:
            input = .report(
                AccessoryReport(
                    accessory: id, gateway: "gw",
                    changes: [.sources(Array(sources.shuffled(using: &rng).prefix(Int.random(in: 0...3, using: &rng))))]))
        case 42..<56:
            input = .sighting(
                Fixtures.sighting(id, for: product, decoded: Bool.random(using: &rng) ? .init(worn: Bool.random(using: &rng)) : nil))
        case 56..<62: input = .request(.showPicker(products: nil, timeout: .default), role: .container)
        case 62..<70: input = .request(.selectCandidate(id, name: nil), role: .container)
        case 70..<78:
            let capabilities = product.capabilities
            let primary = Bool.random(using: &rng) ? source : nil
            input = .request(
                .register(
                    id,
                    RegistrationRequest(capabilities: capabilities, primarySource: capabilities.contains(.audioSwitching) ? primary : nil)),
                role: .container)
        case 78..<82: input = .request(.invalidate(id), role: .container)
        case 82..<84: input = .request(.remove(id), role: .container)
        case 84..<86: input = .request(.current(id), role: .extension)
        default: input = .tick
        }
        return (advance, input)
    }

    /// Runs a seeded sequence and checks the invariants after every step; returns all outputs.
    static func run(seed: UInt64, steps: Int, debounce: Int64) -> [EngineOutput] {
        var rng = SplitMix64(seed: seed)
        var harness = Harness(Fixtures.configuration(debounce: debounce))
        var all: [EngineOutput] = []
        for _ in 0..<steps {
            let (advance, input) = randomInput(&rng)
            harness.now = harness.now.advanced(byMilliseconds: advance)
            let step = harness.send(input)
            all += step.outputs
            check(harness.engine, step, seed: seed)
        }
        return all
    }

    static func isEligible(_ engine: BridgeEngine, _ id: BluetoothAddress, for source: BluetoothAddress) -> Bool {
        SwitchingPolicy.eligibility(of: engine.registry[id], available: engine.records[id]?.available ?? false, for: source) != nil
    }

    static func check(_ engine: BridgeEngine, _ step: EngineStep, seed: UInt64) {
        // No route decision for an invalidated, removed, unavailable or unworn accessory.
        for decision in step.decisions where decision.action == .route {
            let registration = engine.registry[decision.accessory]
            #expect(registration?.isInvalidated == false, "seed \(seed): route to invalidated \(decision.accessory)")
            if registration?.configuration.deviceCapabilities.contains(.placement) == true {
                #expect(registration?.configuration.devicePlacement?.isWorn == true, "seed \(seed): route to unworn \(decision.accessory)")
            }
            #expect(engine.records[decision.accessory]?.available == true, "seed \(seed): route to unavailable/removed")
        }
        // Decisions only on change.
        for change in step.routeChanges {
            #expect(change.previous != change.target, "seed \(seed): route change without change")
        }
        // No stale source: the configuration's identifiers are exactly the tracker's first two,
        // and an accessory that went unavailable in this step has none left.
        for (id, record) in engine.records {
            guard let registration = engine.registry[id], !registration.isInvalidated else { continue }
            let configuration = registration.configuration
            #expect(configuration.primaryAudioSourceDeviceIdentifier == record.tracker.primary, "seed \(seed): stale primary on \(id)")
            #expect(
                configuration.secondaryAudioSourceDeviceIdentifier == record.tracker.secondary, "seed \(seed): stale secondary on \(id)")
        }
        for output in step.outputs {
            if case .availabilityChanged(let id, available: false) = output {
                #expect(engine.records[id]?.tracker.sources.isEmpty == true, "seed \(seed): unavailable \(id) keeps sources")
                #expect(engine.routes.values.contains(id) == false, "seed \(seed): unavailable \(id) keeps routes")
            }
        }
        // The incremental routes equal the routes recomputed from scratch.
        var expected: [BluetoothAddress: BluetoothAddress] = [:]
        for source in sources {
            let contenders = engine.records.keys.compactMap { id -> SwitchingPolicy.Contender? in
                guard
                    let isPrimary = SwitchingPolicy.eligibility(
                        of: engine.registry[id], available: engine.records[id]!.available, for: source)
                else { return nil }
                return .init(accessory: id, isPrimary: isPrimary, wornSince: engine.records[id]!.wornSince)
            }
            expected[source] = SwitchingPolicy.choose(contenders)
        }
        #expect(engine.routes == expected, "seed \(seed): routes drifted from the policy")
        // Events never carry an accessory outside accessory events.
        for event in step.events where !event.type.carriesAccessory {
            #expect(event.accessory == nil)
        }
    }

    @Test("invariants hold for random sequences", arguments: Array(UInt64(1)...UInt64(40)))
    func invariants(seed: UInt64) {
        _ = Self.run(seed: seed, steps: 400, debounce: seed % 2 == 0 ? 0 : 500)
    }

    @Test("replaying the same inputs gives the same outputs", arguments: [UInt64(7), 1234, 0xDEAD_BEEF])
    func replay(seed: UInt64) {
        let first = Self.run(seed: seed, steps: 500, debounce: 500)
        let second = Self.run(seed: seed, steps: 500, debounce: 500)
        #expect(!first.isEmpty)
        #expect(first == second)
    }

    @Test func sequencesProduceDecisions() {
        // Guards the property tests against vacuity: random inputs do reach routing.
        let outputs = Self.run(seed: 99, steps: 1_000, debounce: 0)
        let decisions = outputs.filter { if case .decision = $0 { true } else { false } }
        #expect(decisions.count > 10)
    }
}
