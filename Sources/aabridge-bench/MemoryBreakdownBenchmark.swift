import AccessoryKit
import Bridge
import Configuration
import Foundation
import HomeAssistant
import JSON
import Storage

/// Where the bytes per accessory go: the state `aabridge run` keeps for N accessories, built
/// step by step in this process, on one thread, with glibc's count of heap bytes in use
/// (`malloc_info`, all arenas, mmapped blocks included) after each step. The `memory`
/// benchmark measures the real daemon's RSS; this one says which structure it is.
///
/// The steps mirror the runtime's start: the rows loaded, the engine built and activated, the
/// loaded rows dropped, then what the other stages keep per accessory (Ingest's products, the
/// Publisher's serialized state objects, the Home Assistant tracker) and the transient list of
/// statuses of a republish. The Publisher and Ingest are internal to Bridge, so their maps are
/// rebuilt here with the same key and value types.
enum MemoryBreakdownBenchmark {
    static let points: [Int] = (ProcessInfo.processInfo.environment["AABRIDGE_BENCH_MEMORY_POINTS"] ?? "10000,100000")
        .split(separator: ",").compactMap { Int($0) }.filter { $0 > 0 }

    static func run() async throws {
        guard HeapInUse.bytes() != nil else { throw E2E.Failure("malloc_info is not available (glibc only)") }
        for accessories in points { try measure(accessories) }
    }

    static func measure(_ accessories: Int) throws {
        let workspace = try E2E.Workspace(accessories: accessories, tag: "breakdown")
        var yaml = workspace.yaml(port: 1883)
        yaml = yaml.replacingOccurrences(of: "homeassistant:\n  enabled: false", with: "homeassistant:\n  enabled: true")
        let configuration: BridgeConfiguration
        switch ConfigurationLoader.load(yaml: yaml, hostname: "bench") {
        case .success(let loaded): configuration = loaded
        case .failure(let errors): throw E2E.Failure("configuration: \(errors)")
        }
        let store = try AccessoryStore(path: workspace.databasePath, mode: .readOnly)
        defer { store.close() }

        var steps: [(String, Int)] = []
        var last = HeapInUse.bytes()!
        func step(_ name: String) {
            let now = HeapInUse.bytes()!
            steps.append((name, now - last))
            last = now
        }

        var restored: RestoredState? = try store.load()
        step("rows loaded (RestoredState)")
        var engine = BridgeEngine(configuration: configuration.engine, restored: restored!)
        step("engine built (session, registry, records)")
        _ = engine.handle(.activate, at: Timestamp(milliseconds: 1_800_000_000_000))
        step("engine activated")
        restored = nil
        step("loaded rows dropped")
        var statuses: [AccessoryStatus]? = engine.statuses
        step("statuses of a republish (transient)")
        var products: [BluetoothAddress: String] = [:]
        for status in statuses! { products[status.accessory.id] = status.accessory.product }
        step("Ingest: products")
        let payloads = Payloads()
        // As PublishedStates keeps them: the hash, and the text without its keys.
        var templates = ObjectTextTemplates()
        var serialized: [BluetoothAddress: (hash: Int, compact: [UInt8])] = [:]
        var published: [BluetoothAddress: Timestamp] = [:]
        var availability: [BluetoothAddress: Bool] = [:]
        for status in statuses! {
            serialized[status.accessory.id] = (status.hashValue, templates.compact(payloads.status(status).bytes))
        }
        step("Publisher: serialized state objects")
        for status in statuses! {
            published[status.accessory.id] = Timestamp(milliseconds: 0)
            availability[status.accessory.id] = status.available
        }
        step("Publisher: published-at and availability")
        var tracker = HomeAssistantDiscoveryTracker(
            discovery: HomeAssistantDiscovery(configuration: configuration, version: BridgeModule.version))
        for status in statuses! { _ = tracker.changed(status) }
        step("Home Assistant discovery tracker")
        statuses = nil
        step("statuses dropped")

        print("memory-breakdown \(accessories) accessories: heap bytes in use per accessory, by step")
        for (name, bytes) in steps {
            print(
                "  \(name.padding(toLength: 46, withPad: " ", startingAt: 0)) \(String(format: "%8.1f", Double(bytes) / Double(accessories))) B"
            )
        }
        let label = accessories >= 1000 ? "\(accessories / 1000)k" : "\(accessories)"
        for (index, (_, bytes)) in steps.enumerated() {
            print("memory_breakdown.step\(index)_bytes_per_accessory_\(label) \(bytes / accessories) B")
        }
        withExtendedLifetime((engine, products, serialized, templates, published, availability, tracker)) {}
    }
}

/// Heap bytes in use according to glibc's `malloc_info` (every arena, plus mmapped blocks):
/// `mallinfo2` returns a struct that no Swift module map exports, and `malloc_info` writes XML.
enum HeapInUse {
    private typealias MallocInfo = @convention(c) (Int32, UnsafeMutablePointer<FILE>?) -> Int32
    private static let mallocInfo: MallocInfo? = dlsym(nil, "malloc_info").map { unsafeBitCast($0, to: MallocInfo.self) }

    /// Arena bytes obtained from the system minus free chunks, plus mmapped blocks; nil without glibc.
    static func bytes() -> Int? {
        guard let mallocInfo else { return nil }
        var buffer: UnsafeMutablePointer<CChar>?
        var length = 0
        guard let stream = open_memstream(&buffer, &length) else { return nil }
        _ = mallocInfo(0, stream)
        fclose(stream)
        defer { free(buffer) }
        guard let buffer else { return nil }
        // The totals follow the last </heap>.
        let text = String(cString: buffer)
        guard let totals = text.range(of: "</heap>", options: .backwards).map({ text[$0.upperBound...] }) else { return nil }
        // `<total type="rest" count="4118" size="23613441"/>`: the size after a marker.
        func sizeAfter(_ marker: String) -> Int {
            guard let at = totals.range(of: marker), let sizeAt = totals[at.upperBound...].range(of: #"size=""#) else { return 0 }
            return Int(totals[sizeAt.upperBound...].prefix { $0.isNumber }) ?? 0
        }
        let free = sizeAfter(#"<total type="fast""#) + sizeAfter(#"<total type="rest""#)
        let mmapped = sizeAfter(#"<total type="mmap""#)
        let system = sizeAfter(#"<system type="current""#)
        return system - free + mmapped
    }
}
