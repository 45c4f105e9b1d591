import Foundation
import JSON
import LocalProcess
import MQTT

/// Resident memory of the real daemon (`.build/release/aabridge run`) with 0, 1,000, 10,000 and
/// 100,000 registered accessories: per point a fresh broker and a prepared database; VmRSS is
/// read from /proc/<pid>/status once the retained `bridge/state` says online and the startup
/// publishing has settled. Also the startup time (spawn to `online`) with 10,000 registrations.
enum MemoryBenchmark {
    static let points: [Int] = (ProcessInfo.processInfo.environment["AABRIDGE_BENCH_MEMORY_POINTS"] ?? "0,1000,10000,100000")
        .split(separator: ",").compactMap { Int($0) }

    struct Sample {
        var rssKiB: Int
        var peakKiB: Int
        var startupSeconds: Double
        var settledSeconds: Double
    }

    static func run() async throws {
        let executable = try E2E.aabridgeExecutable()
        print("memory: \(executable), VmRSS once online, settled and at least 16 s after online")
        var startup10k: [Double] = []
        for accessories in points {
            let workspace = try E2E.Workspace(accessories: accessories, tag: "memory")
            let sample = try await measure(executable: executable, workspace: workspace)
            let label = accessories >= 1000 ? "\(accessories / 1000)k" : "\(accessories)"
            print("memory.rss_kib_\(label) \(sample.rssKiB) KiB")
            print("memory.peak_rss_kib_\(label) \(sample.peakKiB) KiB")
            print("memory.startup_ms_\(label) \(E2E.format(sample.startupSeconds * 1000)) ms")
            print(
                "memory (\(accessories) accessories): RSS \(E2E.format(Double(sample.rssKiB) / 1024)) MiB, "
                    + "peak \(E2E.format(Double(sample.peakKiB) / 1024)) MiB, online after \(E2E.format(sample.startupSeconds * 1000)) ms, "
                    + "startup publishing settled after \(E2E.format(sample.settledSeconds * 1000)) ms")
            if accessories == 10_000 {
                startup10k.append(sample.startupSeconds)
                for _ in 0..<4 {
                    startup10k.append(try await measure(executable: executable, workspace: workspace, steadyState: false).startupSeconds)
                }
            }
        }
        if !startup10k.isEmpty {
            startup10k.sort()
            print("memory.startup_ms_10000_median \(E2E.format(startup10k[startup10k.count / 2] * 1000)) ms")
            print(
                "startup with 10,000 registrations, spawn to retained online: \(startup10k.map { E2E.format($0 * 1000) }.joined(separator: "/")) ms (5 runs, warm page cache)"
            )
        }
    }

    static func measure(executable: String, workspace: E2E.Workspace, steadyState: Bool = true) async throws -> Sample {
        let broker = try E2E.Broker(noDelay: false)
        defer { broker.stop() }
        let configuration = try workspace.writeConfiguration(port: broker.port)
        let probe = try await E2E.client(broker, "bench-memory")
        let arrivals = E2E.Recorder(probe)
        try await probe.subscribe("aabridge/#", qos: .atLeastOnce)

        let start = E2E.nanoseconds()
        let child = try ChildProcess(
            path: executable, arguments: ["run", "--config", configuration],
            output: workspace.directory + "/aabridge.log")
        defer { child.stop() }
        var online: UInt64?
        _ = await arrivals.wait(timeout: 120, pollMicroseconds: 200) { list in
            for arrival in list where arrival.topic == "aabridge/bridge/state" {
                if E2E.object(arrival.payload)?["state"]?.stringValue == "online" {
                    online = arrival.at
                    return true
                }
            }
            return false
        }
        guard let online else {
            let log = (try? String(contentsOfFile: workspace.directory + "/aabridge.log", encoding: .utf8)) ?? ""
            throw E2E.Failure("aabridge did not come online within 120 s; log:\n\(log)")
        }
        guard steadyState else {
            await probe.disconnect()
            return Sample(rssKiB: -1, peakKiB: -1, startupSeconds: Double(online - start) / 1e9, settledSeconds: 0)
        }
        // Settled: the startup publishing (two retained topics per accessory) has stopped
        // arriving for 500 ms.
        var lastCount = arrivals.count
        var lastChange = E2E.nanoseconds()
        while E2E.nanoseconds() - lastChange < 500_000_000 {
            usleep(20_000)
            let count = arrivals.count
            if count != lastCount {
                lastCount = count
                lastChange = E2E.nanoseconds()
            }
        }
        let settled = lastChange
        // Steady state: at least 16 s after online (the runtime may hand freed memory back
        // to the system a few seconds after its startup publishing).
        while steadyState && E2E.nanoseconds() < max(settled + 1_000_000_000, online + 16_000_000_000) { usleep(100_000) }
        let status = (try? String(contentsOfFile: "/proc/\(child.pid)/status", encoding: .utf8)) ?? ""
        func kib(_ key: String) -> Int {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(key + ":") }) else { return -1 }
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? -1
        }
        let sample = Sample(
            rssKiB: kib("VmRSS"), peakKiB: kib("VmHWM"),
            startupSeconds: Double(online - start) / 1e9, settledSeconds: Double(settled - start) / 1e9)
        await probe.disconnect()
        return sample
    }
}
