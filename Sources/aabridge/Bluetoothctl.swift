import AccessoryKit
import Telemetry

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// BlueZ's `bluetoothctl`, asked for this computer's controller and for the devices connected
/// to it (`aabridge report-sources`). Every answer is read by ``BluetoothctlOutput``.
///
/// `bluetoothctl devices Connected` lists the connected devices in one call, from BlueZ 5.65
/// on. Before that `devices` took no argument and refuses one ("Too many arguments", exit 1);
/// then each accessory is asked about with `bluetoothctl info <address>` (`Connected: yes`),
/// which every BlueZ 5 has: one call per accessory the bridge takes sources for.
struct Bluetoothctl {
    /// The path or name (looked up on PATH) of the executable.
    let executable: String
    /// How long one call may take: it answers in milliseconds, but waits for bluetoothd
    /// forever when the daemon is not running.
    static let timeout: Duration = .seconds(5)

    /// Whether `devices Connected` was refused and `info` is asked instead.
    private(set) var usesInfo = false

    /// Why bluetoothctl gave no answer, in one line.
    struct Failure: Error {
        var message: String
    }

    /// The controllers `bluetoothctl show` names (the default controller: the one whose devices
    /// `devices` lists).
    func controllers() async throws(Failure) -> [BluetoothAddress] {
        let output = try await run(["show"])
        return BluetoothctlOutput.controllers(output.text)
    }

    /// The devices connected now, among them every one of `accessories` that is. With BlueZ
    /// before 5.65 only `accessories` are asked about. `note` says once that this happened.
    mutating func connected(
        among accessories: [BluetoothAddress]
    ) async throws(Failure) -> (
        devices: Set<BluetoothAddress>, note: String?
    ) {
        var note: String?
        if !usesInfo {
            let output = try await run(["devices", "Connected"], checkStatus: false)
            if output.status == 0 { return (Set(BluetoothctlOutput.devices(output.text).map(\.address)), nil) }
            guard BluetoothctlOutput.refusesDeviceFilter(output.text) else { throw failure(["devices", "Connected"], output) }
            usesInfo = true
            note =
                "this bluetoothctl has no 'devices Connected' (BlueZ before 5.65): asking 'bluetoothctl info' about each accessory instead"
        }
        var devices: Set<BluetoothAddress> = []
        for accessory in accessories {
            let arguments = ["info", accessory.description]
            let output = try await run(arguments, checkStatus: false)
            if output.status == 0, BluetoothctlOutput.isConnected(info: output.text) == true { devices.insert(accessory) }
            // A device BlueZ never saw is not connected; any other failure is one.
            if output.status != 0 && !BluetoothctlOutput.saysUnknownDevice(output.text) { throw failure(arguments, output) }
        }
        return (devices, note)
    }

    private func run(_ arguments: [String], checkStatus: Bool = true) async throws(Failure) -> ToolProcess.Output {
        let command = (["bluetoothctl"] + arguments).joined(separator: " ")
        switch await ToolProcess.run(executable, arguments, timeout: Self.timeout) {
        case .success(let output):
            if checkStatus && output.status != 0 { throw failure(arguments, output) }
            return output
        case .failure(.timedOut):
            throw Failure(
                message:
                    "'\(command)' did not answer within \(Self.timeout.components.seconds) s (is bluetoothd running? bluetoothctl waits for it)"
            )
        case .failure(.cannotStart(let reason)):
            let hint =
                executable.contains("/")
                ? "" : " (bluetoothctl comes with BlueZ, Debian's package bluez; or name it with --bluetoothctl PATH)"
            throw Failure(message: "cannot run '\(executable)': \(reason)\(hint)")
        }
    }

    /// `'bluetoothctl show' failed (exit status 1): No default controller available`: the
    /// first lines it printed, joined, so that the failure stays one line.
    private func failure(_ arguments: [String], _ output: ToolProcess.Output) -> Failure {
        let command = (["bluetoothctl"] + arguments).joined(separator: " ")
        let how = output.status.map { "exit status \($0)" } ?? "killed by a signal"
        var said = BluetoothctlOutput.lines(output.text).prefix(3).map { String($0.trimmingWhitespace) }.joined(
            separator: "; ")
        if said.count > 200 { said = String(said.prefix(200)) + "…" }
        return Failure(message: "'\(command)' failed (\(how))\(said.isEmpty ? "" : ": \(said)")")
    }
}
