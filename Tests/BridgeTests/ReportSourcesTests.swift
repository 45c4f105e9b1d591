import Foundation
import JSON
import LocalProcess
import MQTT
import TestSupport
import Testing

/// `aabridge report-sources`, the real executable, driven by a stand-in for `bluetoothctl` (a
/// shell script answering from files the test rewrites) against a real broker and a bridge
/// running in this process.
@Suite("aabridge report-sources")
struct ReportSourcesTests {
    /// The desktop the command runs on: its controller's address is the source reported.
    static let desktop = Fixture.laptop
    static let desktopRoute = "aabridge/source/665544332211/route"
    static let speakerSet = "aabridge/accessory/\(Fixture.speakerTopic)/set"
    static let usageHeader = "usage: aabridge report-sources"
    static let keyboard = "Device 00:11:22:33:44:55 MX Keys"
    static let speakerLine = "Device \(Fixture.speaker) Kitchen Speaker"
    static let headphonesLine = "Device \(Fixture.headphones) Bob’s Headphones"

    /// A temporary directory with the stand-in `bluetoothctl` and the files it answers from:
    /// `show.txt` (`bluetoothctl show`), `connected.txt` (`devices Connected`; `info` answers
    /// from it too), `fail-<command>` (that command prints the file and exits 1), `legacy`
    /// (`devices` refuses an argument, as before BlueZ 5.65), `hang-<command>` (never answers).
    /// Every call is appended to `calls.log`.
    final class Workspace {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("aabridge-sources-\(UUID().uuidString)")
        var bluetoothctl: String { url.appendingPathComponent("bluetoothctl").path }

        init(controllers: [String] = [ReportSourcesTests.desktop]) throws {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            let script = """
                #!/bin/sh
                # A stand-in for bluetoothctl, answering from the files next to it.
                dir=$(dirname "$0")
                echo "$*" >> "$dir/calls.log"
                if [ -f "$dir/hang-$1" ]; then exec sleep 60; fi
                if [ -f "$dir/fail-$1" ]; then cat "$dir/fail-$1"; exit 1; fi
                case "$1" in
                show) cat "$dir/show.txt" ;;
                devices)
                    if [ -f "$dir/legacy" ] && [ $# -gt 1 ]; then printf '\\033[1;39mToo many arguments\\033[0m\\n'; exit 1; fi
                    cat "$dir/connected.txt" ;;
                info)
                    if grep -q "^Device $2 " "$dir/connected.txt"; then
                        printf 'Device %s (public)\\n\\tName: x\\n\\tPaired: yes\\n\\tConnected: yes\\n' "$2"
                    else
                        echo "Device $2 not available"; exit 1
                    fi ;;
                *) echo "Invalid command in menu main: $1"; exit 1 ;;
                esac

                """
            // Written with O_CLOEXEC: a child another test spawns meanwhile (a broker) must not
            // inherit the file open for writing, or running it fails with "Text file busy".
            let file = open(bluetoothctl, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
            guard file >= 0 else { throw BrokerError("cannot create \(bluetoothctl)") }
            let bytes = Array(script.utf8)
            let written = bytes.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
            close(file)
            guard written == bytes.count else { throw BrokerError("cannot write \(bluetoothctl)") }
            try put("show.txt", controllers.map { "Controller \($0) (public)\n\tName: desktop\n\tPowered: yes\n" }.joined())
            try connect([])
        }

        deinit { try? FileManager.default.removeItem(at: url) }

        func put(_ name: String, _ text: String) throws {
            try text.write(to: url.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }

        func remove(_ name: String) { try? FileManager.default.removeItem(at: url.appendingPathComponent(name)) }

        /// What `bluetoothctl devices Connected` answers from now on.
        func connect(_ lines: [String]) throws { try put("connected.txt", lines.map { $0 + "\n" }.joined()) }

        var calls: [String] {
            ((try? String(contentsOf: url.appendingPathComponent("calls.log"), encoding: .utf8)) ?? "").split(separator: "\n").map(
                String.init)
        }

        /// A configuration file for the command: the test bridge's, or one for another broker.
        func configuration(_ yaml: String) throws -> String {
            let path = url.appendingPathComponent("aabridge-\(UUID().uuidString.prefix(6)).yaml").path
            try yaml.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }

        func configuration(server: String) throws -> String {
            try configuration(BridgeHarness.yaml(server: server, database: url.appendingPathComponent("unused.sqlite3").path))
        }
    }

    /// Runs the executable to its end and returns its exit status and combined output; one still
    /// running after 30 s is killed and reported as -2.
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("sources-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: output) }
        let child = try ChildProcess(path: try ExecutableTests.executable, arguments: arguments, output: output.path)
        let status = child.wait(timeout: 30) ?? -2
        return (status, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }

    /// The lines that report a change, in order.
    static func changeLines(_ output: String) -> [String] {
        output.split(separator: "\n").map(String.init).filter { $0.hasPrefix("connected ") || $0.hasPrefix("disconnected ") }
    }

    /// A bridge in this process, with Kitchen Speaker registered for audio switching only (no
    /// placement: it counts as worn while available) and heard by a gateway.
    static func withSpeakerBridge(
        availabilityTimeoutSeconds: Int = 120, _ body: (BridgeHarness, Observer) async throws -> Void
    ) async throws {
        let harness = try BridgeHarness(availabilityTimeoutSeconds: availabilityTimeoutSeconds)
        defer { harness.removeDirectory() }
        try await harness.run { observer in
            let registered = try await observer.request(
                "accessory/register", #""id":"\#(Fixture.speaker)","capabilities":["audioSwitching"]"#)
            #expect(registered["status"] == "ok", "\(registered)")
            try await hear(observer)
            await observer.waitFor("aabridge/accessory/\(Fixture.speakerTopic)") { $0["available"] == true }
            try await body(harness, observer)
        }
    }

    /// Waits for the `number`th message on `topic` (1 for the first) and returns it, parsed.
    @discardableResult
    static func waitForMessage(
        _ observer: Observer, on topic: String, number: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) async -> JSONValue? {
        let arrived = await observer.messages.wait(timeout: .seconds(20)) { $0.filter { $0.topic == topic }.count >= number }
        guard arrived else {
            Issue.record(
                "no message number \(number) on \(topic); got: \(observer.messages(on: topic).map(\.payloadString))",
                sourceLocation: sourceLocation)
            return nil
        }
        return observer.json(on: topic)[number - 1]
    }

    /// One `--once` run that reports Kitchen Speaker connected to the desktop; returns once the
    /// route and the retained list the next run reads show it (the list follows the state).
    static func reportOnce(_ base: [String], _ observer: Observer) async throws -> (status: Int32, output: String) {
        let result = try Self.run(base + ["--once"])
        #expect(result.status == 0, "\(result.output)")
        #expect(Self.changeLines(result.output) == ["connected \(Fixture.speaker) (Kitchen Speaker) to 66:55:44:33:22:11"])
        await observer.waitFor(Self.desktopRoute) { $0["target"] == .string(Fixture.speaker) }
        await observer.waitFor("aabridge/bridge/accessories") { accessories in
            accessories.arrayValue?.contains { $0["id"] == .string(Fixture.speaker) && $0["primary_source"] == .string(Self.desktop) }
                == true
        }
        return result
    }

    /// A gateway relays a sighting of Kitchen Speaker.
    static func hear(_ observer: Observer) async throws {
        try await observer.publish("aabridge/telemetry/livingroom/\(Fixture.speakerTopic)", #"{"rssi":-50}"#)
    }

    // MARK: - Command line

    @Test("--help lists report-sources; its own help explains every option, and docs/sources.md documents each")
    func help() throws {
        let (status, output) = try Self.run(["--help"])
        #expect(status == 0)
        #expect(output.contains("\n  report-sources "), "\(output)")
        let (ownStatus, own) = try Self.run(["report-sources", "--help"])
        #expect(ownStatus == 0)
        #expect(own.hasPrefix(Self.usageHeader), "\(own)")
        let sources = try String(contentsOfFile: Repository.file("docs/sources.md"), encoding: .utf8)
        for option in ["--config", "--source", "--interval", "--bluetoothctl", "--once"] {
            #expect(own.contains("  \(option) "), "the help explains \(option):\n\(own)")
            #expect(sources.contains("`\(option)"), "docs/sources.md explains \(option)")
        }
    }

    @Test(
        "usage errors exit 2 before anything runs",
        arguments: [
            (["report-sources", "--sorce", "66:55:44:33:22:11"], "unknown option '--sorce'", true),
            (["report-sources", "--once", "--once"], "--once is given twice", true),
            (["report-sources", "--interval"], "--interval needs a value", true),
            (["report-sources", "now"], "unexpected argument 'now'", true),
            (["report-sources", "--source", "66:55:44:33:22"], "--source '66:55:44:33:22' is not a Bluetooth address", false),
            (["report-sources", "--interval", "0"], "--interval '0' is not a number of seconds from 0.1 to 3600", false),
            (["report-sources", "--interval", "soon"], "--interval 'soon' is not a number of seconds", false),
        ])
    func usageErrors(arguments: [String], message: String, withUsage: Bool) throws {
        let workspace = try Workspace()
        let (status, output) = try Self.run(arguments + ["--bluetoothctl", workspace.bluetoothctl])
        #expect(status == 2, "\(arguments): \(output)")
        #expect(output.contains(message), "\(output)")
        #expect(output.contains(Self.usageHeader) == withUsage, "\(output)")
        #expect(workspace.calls.isEmpty, "bluetoothctl was not run: \(workspace.calls)")
    }

    @Test("bluetoothctl missing, failing, silent or naming several controllers: one line on stderr, exit 1 (2 for several)")
    func bluetoothctlProblems() throws {
        let workspace = try Workspace()
        let config = try workspace.configuration(server: "mqtt://127.0.0.1:\(try FreePort.find())")
        let base = ["report-sources", "--config", config]

        var result = try Self.run(base + ["--bluetoothctl", workspace.url.appendingPathComponent("nowhere/bluetoothctl").path])
        #expect(result.status == 1)
        #expect(
            result.output.contains("cannot run '\(workspace.url.path)/nowhere/bluetoothctl': No such file or directory"), "\(result.output)"
        )
        #expect(result.output.split(separator: "\n").count == 1, "one line: \(result.output)")

        result = try Self.run(base + ["--bluetoothctl", "no-such-bluetoothctl-\(UUID().uuidString.prefix(6))"])
        #expect(result.status == 1)
        #expect(result.output.contains("bluetoothctl comes with BlueZ, Debian's package bluez"), "\(result.output)")

        try workspace.put("fail-show", "No default controller available\n")
        result = try Self.run(base + ["--bluetoothctl", workspace.bluetoothctl])
        #expect(result.status == 1)
        #expect(
            result.output.contains(
                "aabridge report-sources: 'bluetoothctl show' failed (exit status 1): No default controller available"),
            "\(result.output)")
        workspace.remove("fail-show")

        try workspace.put("show.txt", "Controller 00:1A:7D:DA:71:13 (public)\nController 5C:F3:70:00:00:01 (public)\n")
        result = try Self.run(base + ["--bluetoothctl", workspace.bluetoothctl])
        #expect(result.status == 2)
        #expect(
            result.output.contains(
                "'bluetoothctl show' names 2 controllers (00:1A:7D:DA:71:13, 5C:F3:70:00:00:01): give this computer's address with --source ADDR"
            ), "\(result.output)")

        // bluetoothctl waits for bluetoothd forever when the daemon is not running.
        try workspace.put("hang-show", "")
        let started = ContinuousClock.now
        result = try Self.run(base + ["--bluetoothctl", workspace.bluetoothctl])
        #expect(result.status == 1)
        #expect(result.output.contains("'bluetoothctl show' did not answer within 5 s (is bluetoothd running?"), "\(result.output)")
        #expect(ContinuousClock.now - started < .seconds(15))
    }

    @Test("a broker that is not there, one the bridge never ran against, a failing first look at the devices: exit 1")
    func noBridge() async throws {
        let workspace = try Workspace()
        let dead = try workspace.configuration(server: "mqtt://127.0.0.1:\(try FreePort.find())")
        var result = try Self.run(["report-sources", "--config", dead, "--bluetoothctl", workspace.bluetoothctl, "--once"])
        #expect(result.status == 1)
        #expect(result.output.contains("aabridge report-sources: broker not reachable"), "\(result.output)")

        let broker = try MosquittoBroker()
        let config = try workspace.configuration(server: broker.url)
        let base = ["report-sources", "--config", config, "--bluetoothctl", workspace.bluetoothctl]
        result = try Self.run(base + ["--once"])
        #expect(result.status == 1)
        #expect(
            result.output.contains("no retained aabridge/bridge/accessories: the bridge never ran against this broker"), "\(result.output)")

        // A bridge's retained list, without the bridge: enough to get to bluetoothctl.
        let observer = try await Observer(broker: broker)
        try await observer.publish("aabridge/bridge/accessories", "[]", retain: true)
        try workspace.put("fail-devices", "No default controller available\n")
        result = try Self.run(base)
        #expect(result.status == 1, "the daemon does not start without an answer: \(result.output)")
        #expect(
            result.output.contains("'bluetoothctl devices Connected' failed (exit status 1): No default controller available"),
            "\(result.output)")
        await observer.disconnect()
    }

    // MARK: - Against the bridge

    @Test(
        "connected and disconnected as bluetoothctl says, for the accessories the bridge takes sources for; the route follows; SIGTERM takes it back"
    )
    func followsBluetoothctl() async throws {
        try await Self.withSpeakerBridge { harness, observer in
            let workspace = try Workspace()
            let config = try workspace.configuration(harness.yaml)
            // Bob's headphones are paired and connected, but not registered: never reported.
            try workspace.connect([Self.keyboard, Self.speakerLine, Self.headphonesLine])
            let log = workspace.url.appendingPathComponent("report.log").path
            let child = try ChildProcess(
                path: try ExecutableTests.executable,
                arguments: ["report-sources", "--config", config, "--bluetoothctl", workspace.bluetoothctl, "--interval", "0.2"],
                output: log)
            var output: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

            let routed = await Self.waitForMessage(observer, on: Self.desktopRoute, number: 1)
            #expect(routed?["target"] == .string(Fixture.speaker))
            #expect(routed?["reason"] == "source_connected")
            #expect(observer.messages(on: Self.speakerSet).map(\.payloadString) == [#"{"source_connected":"66:55:44:33:22:11"}"#])

            try workspace.connect([Self.keyboard, Self.headphonesLine])
            let fallback = await Self.waitForMessage(observer, on: Self.desktopRoute, number: 2)
            #expect(fallback?["target"] == "fallback")
            #expect(fallback?["reason"] == "source_disconnected")
            #expect(observer.messages(on: Self.speakerSet).last?.payloadString == #"{"source_disconnected":"66:55:44:33:22:11"}"#)

            try workspace.connect([Self.speakerLine])
            let again = await Self.waitForMessage(observer, on: Self.desktopRoute, number: 3)
            #expect(again?["target"] == .string(Fixture.speaker))

            kill(child.pid, SIGTERM)
            #expect(await child.wait(timeout: .seconds(20)) == 0, "\(output)")
            let last = await Self.waitForMessage(observer, on: Self.desktopRoute, number: 4)
            #expect(last?["target"] == "fallback")
            let routes = observer.json(on: Self.desktopRoute)
            #expect(routes.map(\.["reason"]) == ["source_connected", "source_disconnected", "source_connected", "source_disconnected"])
            #expect(observer.messages(on: Self.speakerSet).count == 4)
            for other in [Fixture.headphonesTopic, Fixture.airPodsTopic] {
                #expect(observer.messages(on: "aabridge/accessory/\(other)/set").isEmpty)
                #expect(observer.messages(on: "aabridge/accessory/\(other)/error").isEmpty)
            }

            let text = output
            #expect(
                text.hasPrefix(
                    "reporting 66:55:44:33:22:11's connections to \(Fixture.airPods) (Alice's AirPods), \(Fixture.speaker) (Kitchen Speaker)\n"
                ), "\(text)")
            let connected = "connected \(Fixture.speaker) (Kitchen Speaker) to 66:55:44:33:22:11"
            let disconnected = "disconnected \(Fixture.speaker) (Kitchen Speaker) from 66:55:44:33:22:11"
            #expect(Self.changeLines(text) == [connected, disconnected, connected, disconnected], "\(text)")
            #expect(Array(workspace.calls.prefix(2)) == ["show", "devices Connected"])
            #expect(Set(workspace.calls.dropFirst()) == ["devices Connected"])
        }
    }

    @Test("--once reports what is connected and exits; a second run finds nothing to say; a third takes back what the bridge still lists")
    func once() async throws {
        try await Self.withSpeakerBridge { harness, observer in
            let workspace = try Workspace()
            let base = ["report-sources", "--config", try workspace.configuration(harness.yaml), "--bluetoothctl", workspace.bluetoothctl]
            try workspace.connect([Self.speakerLine])
            var result = try await Self.reportOnce(base, observer)

            result = try Self.run(base + ["--once", "--source", Self.desktop.replacingOccurrences(of: ":", with: "-")])
            #expect(result.status == 0, "\(result.output)")
            #expect(result.output.contains("nothing to report for 66:55:44:33:22:11"), "\(result.output)")
            #expect(workspace.calls.filter { $0 == "show" }.count == 1, "--source: no need to ask")

            // Disconnected while nothing ran (a cron job): the bridge still lists the desktop.
            try workspace.connect([])
            result = try Self.run(base + ["--once"])
            #expect(result.status == 0, "\(result.output)")
            #expect(
                Self.changeLines(result.output) == [
                    "disconnected \(Fixture.speaker) (Kitchen Speaker) from 66:55:44:33:22:11 (the bridge still listed it)"
                ], "\(result.output)")
            let fallback = await observer.waitFor(Self.desktopRoute) { $0["target"] == "fallback" }
            #expect(fallback?["reason"] == "source_disconnected")
            #expect(observer.messages(on: Self.speakerSet).count == 2)
        }
    }

    @Test("an accessory paired from a rotating address is matched by its alias, the public address bluetoothctl lists; old BlueZ too")
    func matchedByAlias() async throws {
        try await Self.withSpeakerBridge { harness, observer in
            let alias = "F0:F1:F2:F3:F4:F5"
            let set = try await observer.request("accessory/alias", #""id":"\#(Fixture.speaker)","address":"\#(alias)""#)
            #expect(set["status"] == "ok")
            await observer.waitFor("aabridge/bridge/accessories") { accessories in
                accessories.arrayValue?.contains { $0["id"] == .string(Fixture.speaker) && $0["alias"] == .string(alias) } == true
            }
            let workspace = try Workspace()
            let base = ["report-sources", "--config", try workspace.configuration(harness.yaml), "--bluetoothctl", workspace.bluetoothctl]
            try workspace.connect(["Device \(alias) Kitchen Speaker"])
            var result = try await Self.reportOnce(base, observer)
            // BlueZ before 5.65: asked about with `info`, the alias among the addresses.
            try workspace.put("legacy", "")
            try workspace.connect([])
            result = try Self.run(base + ["--once"])
            #expect(Self.changeLines(result.output).first?.hasPrefix("disconnected \(Fixture.speaker)") == true, "\(result.output)")
            #expect(workspace.calls.contains("info \(alias)"), "\(workspace.calls)")
        }
    }

    @Test("BlueZ before 5.65 (no 'devices Connected'): each accessory is asked about with 'bluetoothctl info'")
    func oldBlueZ() async throws {
        try await Self.withSpeakerBridge { harness, observer in
            let workspace = try Workspace()
            try workspace.put("legacy", "")
            try workspace.connect([Self.speakerLine, Self.headphonesLine])
            let result = try Self.run([
                "report-sources", "--config", try workspace.configuration(harness.yaml), "--bluetoothctl", workspace.bluetoothctl, "--once",
            ])
            #expect(result.status == 0, "\(result.output)")
            #expect(result.output.contains("this bluetoothctl has no 'devices Connected' (BlueZ before 5.65)"), "\(result.output)")
            #expect(Self.changeLines(result.output) == ["connected \(Fixture.speaker) (Kitchen Speaker) to 66:55:44:33:22:11"])
            #expect(workspace.calls == ["show", "devices Connected", "info \(Fixture.airPods)", "info \(Fixture.speaker)"])
            await observer.waitFor(Self.desktopRoute) { $0["target"] == .string(Fixture.speaker) }
        }
    }

    @Test("the bridge clears the sources of an accessory nobody hears; heard again, the connection is reported again")
    func reportedAgainAfterUnavailable() async throws {
        try await Self.withSpeakerBridge(availabilityTimeoutSeconds: 2) { harness, observer in
            let workspace = try Workspace()
            try workspace.connect([Self.speakerLine])
            // Keep the speaker heard until the route is there.
            let heartbeat = Task {
                while !Task.isCancelled {
                    try? await Self.hear(observer)
                    try? await Task.sleep(for: .milliseconds(300))
                }
            }
            let log = workspace.url.appendingPathComponent("report.log").path
            let child = try ChildProcess(
                path: try ExecutableTests.executable,
                arguments: [
                    "report-sources", "--config", try workspace.configuration(harness.yaml), "--bluetoothctl", workspace.bluetoothctl,
                    "--interval", "0.2",
                ], output: log)
            await Self.waitForMessage(observer, on: Self.desktopRoute, number: 1)
            let connectedAt = ContinuousClock.now
            heartbeat.cancel()
            _ = await heartbeat.value

            let lost = await Self.waitForMessage(observer, on: Self.desktopRoute, number: 2)
            #expect(lost?["target"] == "fallback")
            #expect(lost?["reason"] == "unavailable")
            await observer.waitFor("aabridge/accessory/\(Fixture.speakerTopic)") {
                $0["available"] == false && $0["primary_source"] == .null
            }
            // The reporter believes a state received 2 s after its message at the soonest (a sooner
            // one may predate it); a real accessory is unheard for far longer than that.
            try await Task.sleep(until: connectedAt + .milliseconds(2_500))
            try await Self.hear(observer)
            let again = await Self.waitForMessage(observer, on: Self.desktopRoute, number: 3)
            #expect(again?["target"] == .string(Fixture.speaker))
            #expect(again?["reason"] == "source_connected")
            kill(child.pid, SIGTERM)
            #expect(await child.wait(timeout: .seconds(20)) == 0)
            let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            #expect(
                output.contains("connected \(Fixture.speaker) (Kitchen Speaker) to 66:55:44:33:22:11 again (the bridge had dropped it)"),
                "\(output)")
        }
    }
}
