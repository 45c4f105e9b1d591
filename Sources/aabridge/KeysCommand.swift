import AccessoryKit
import Bridge
import Configuration
import JSON
import MQTT
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

/// `aabridge keys import-bluez`: sets accessories' IRKs from the pairings BlueZ keeps on a Linux
/// gateway box, through the running bridge's `accessory/keys` request (mqtt-api.md), so that the
/// bridge commits them as it commits any key and nothing but the bridge touches its database.
///
/// A BlueZ device is imported into the accessory whose id is the device's identity address (its
/// directory's name): that match cannot be wrong. A match by name could be (two people's
/// "AirPods"), so it is made only for the accessory the user names with `--id`, and refused
/// when more than one device fits. A key is never printed: every line says what matched or why
/// not, and nothing else.
///
/// Exit status: 0 when every key was set (or, with `--dry-run`, would be), 1 when the broker or
/// the bridge failed (unreachable, offline, no answer, an error response), 2 for a usage or
/// input error (a bad option, an unreadable directory, an unknown adapter, device or accessory,
/// an ambiguous name, nothing to import).
enum KeysCommand {
    static let usage = """
        usage: aabridge keys import-bluez [--config PATH] [--bluetooth-dir DIR] [--adapter ADDR]
                                          [--device ADDR] [--id ID] [--dry-run]

        Sets accessories' IRKs from BlueZ's pairings (DIR/<adapter>/<device>/info) through the
        running bridge. A device is imported into the accessory whose id is its address; with
        --id, into that accessory, from the device named like it or the one --device names.
        Keys are never printed.

        \(CommandOption.helpLines(options))

        The other ways to set keys: aabridge keys fetch-airpods --help (from the AirPods
        themselves), aabridge keys import-macos --help (from a Mac's Keychain).
        """

    static let subcommands = "import-bluez, fetch-airpods, import-macos"
    static let options = [
        CommandOption.config,
        CommandOption("--bluetooth-dir", value: "DIR", help: "BlueZ's storage (default /var/lib/bluetooth, readable by root only)"),
        CommandOption("--adapter", value: "ADDR", help: "only this adapter's pairings"),
        CommandOption("--device", value: "ADDR", help: "only this BlueZ device"),
        CommandOption("--id", value: "ID", help: "the accessory to import into, by name or with --device"),
        CommandOption("--dry-run", help: "say what would be imported, and send nothing"),
    ]
    /// How long the bridge has to answer one request (it commits the key first).
    static let responseTimeout: Duration = .seconds(10)
    /// How long to wait for the retained `bridge/state` and `bridge/accessories`, which the
    /// broker sends right after the subscription is acknowledged.
    static let retainedTimeout: Duration = .seconds(3)

    /// What the user chose on the command line.
    struct Selection {
        var directory = BlueZPairings.defaultDirectory
        var adapter: BluetoothAddress?
        var device: BluetoothAddress?
        var accessory: BluetoothAddress?
        var dryRun = false
    }

    /// One BlueZ device (under one or more adapters) and what becomes of it.
    struct Entry {
        var devices: [BlueZPairings.Device]
        var outcome: Outcome

        var address: BluetoothAddress { devices[0].address }

        var label: String { KeysCommand.label(devices) }
    }

    /// `F0:99:B6:12:34:56 ("Alice’s AirPods", adapter 00:1A:7D:DA:71:13)`: how a line names a device.
    static func label(_ devices: [BlueZPairings.Device]) -> String {
        // A device's name is whatever it called itself when it paired: escape sequences in it
        // must not reach the terminal (or a log that captures this output).
        let name = devices.lazy.compactMap(\.name).first.map { "\"\(TerminalText.sanitised($0))\", " } ?? ""
        let adapters = devices.map(\.adapter.description).joined(separator: ", ")
        return "\(devices[0].address) (\(name)adapter\(devices.count > 1 ? "s" : "") \(adapters))"
    }

    enum Outcome {
        case importInto(ListedAccessory, AccessoryKey, because: String)
        case skip(String)
    }

    struct Failure: Error {
        var status: Int32
        var message: String
    }

    static func run(options: CommandArguments) async -> Int32 {
        do {
            return try await importBlueZ(options: options)
        } catch {
            printError("aabridge keys import-bluez: \(error.message)")
            return error.status
        }
    }

    static func importBlueZ(options: CommandArguments) async throws(Failure) -> Int32 {
        let selection = try parse(options)
        guard let configuration = Command.loadConfiguration(options) else { return ConfigurationErrors.exitStatus }
        let store: BlueZPairings
        do {
            store = try BlueZPairings.read(directory: selection.directory, adapter: selection.adapter)
        } catch {
            let hint =
                error.isPermissionDenied
                ? " (BlueZ keeps its pairings readable by root only: run this with sudo, or copy the directory and name the copy with --bluetooth-dir)"
                : ""
            throw Failure(status: 2, message: "\(error)\(hint)")
        }
        var devices = store.devices
        if let device = selection.device {
            devices = devices.filter { $0.address == device }
            guard !devices.isEmpty else {
                let known = store.devices.map(\.address.description)
                throw Failure(
                    status: 2,
                    message:
                        "no BlueZ device \(device) under \(store.directory) (devices: \(known.isEmpty ? "none" : Set(known).sorted().joined(separator: ", ")))"
                )
            }
        }
        guard !devices.isEmpty else {
            throw Failure(status: 2, message: "nothing to import: no paired devices under \(store.directory)")
        }
        let groups = group(devices)
        // Devices without a key need nothing from the bridge: say so without a broker.
        guard groups.contains(where: { usableKey($0) != nil }) else {
            for devices in groups { print("\(label(devices)): \(reasonWithoutKey(devices))") }
            throw Failure(status: 2, message: "nothing to import: no BlueZ device under \(store.directory) has an IRK")
        }

        let delivery = try await KeysDelivery.open(configuration, requireOnline: !selection.dryRun)
        do {
            let status = try await importBlueZ(groups: groups, selection: selection, delivery: delivery)
            await delivery.close()
            return status
        } catch {
            await delivery.close()
            throw error
        }
    }

    static func importBlueZ(
        groups: [[BlueZPairings.Device]], selection: Selection, delivery: KeysDelivery
    ) async throws(Failure) -> Int32 {
        let accessories = delivery.accessories
        let entries = try plan(groups: groups, accessories: accessories, selection: selection)
        let imports = entries.filter { if case .importInto = $0.outcome { true } else { false } }
        guard !imports.isEmpty else {
            for entry in entries { print("\(entry.label): \(describe(entry.outcome))") }
            throw Failure(status: 2, message: "nothing to import: no BlueZ device with an IRK matched an accessory")
        }
        if selection.dryRun {
            for entry in entries {
                switch entry.outcome {
                case .importInto(let accessory, _, let because):
                    print("\(entry.label): would import its IRK into \(accessory.label) (\(because))")
                case .skip: print("\(entry.label): \(describe(entry.outcome))")
                }
            }
            return 0
        }

        var failed = false
        var bridgeSilent = false
        for entry in entries {
            guard case .importInto(let accessory, let key, let because) = entry.outcome else {
                print("\(entry.label): \(describe(entry.outcome))")
                continue
            }
            guard !bridgeSilent else {
                print("\(entry.label): not sent to \(accessory.label): the bridge did not answer the previous request")
                continue
            }
            switch try await delivery.send(irk: key, encryptionKey: nil, to: accessory) {
            case .silent:
                print("\(entry.label): \(delivery.silentMessage)")
                failed = true
                bridgeSilent = true
            case .stored(let irk, let encryptionKey):
                print(
                    "\(entry.label): imported its IRK into \(accessory.label) (\(because)); the bridge reports: IRK \(irk ? "set" : "NOT set"), encryption key \(encryptionKey ? "set" : "not set")"
                )
                if !irk { failed = true }
            case .refused(let code, let message):
                print("\(entry.label): the bridge refused the IRK for \(accessory.label): \(code): \(message)")
                failed = true
            }
        }
        return failed ? 1 : 0
    }

    // MARK: - Matching

    /// Decides each device's outcome. Without `--id`, a device goes to the accessory whose id
    /// is its address; with `--id`, only into that accessory, from the one device that fits.
    static func plan(
        groups: [[BlueZPairings.Device]], accessories: [ListedAccessory], selection: Selection
    ) throws(Failure)
        -> [Entry]
    {
        let byID = Dictionary(accessories.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        // A device's address is an accessory's when it is its id or its alias.
        let byAddress = byID.merging(accessories.compactMap { accessory in accessory.alias.map { ($0, accessory) } }) { id, _ in id }
        guard let target = selection.accessory else {
            return groups.map { devices in
                guard let key = usableKey(devices) else { return Entry(devices: devices, outcome: .skip(reasonWithoutKey(devices))) }
                guard let accessory = byAddress[devices[0].address] else {
                    return Entry(
                        devices: devices,
                        outcome: .skip(
                            "not imported: no accessory has this id (to import it into an accessory by name, run again with --id <accessory id>)"
                        ))
                }
                return Entry(devices: devices, outcome: .importInto(accessory, key, because: identityReason(accessory, devices[0].address)))
            }
        }
        guard let accessory = byAddress[target] else {
            let known = accessories.map(\.label).joined(separator: ", ")
            throw Failure(
                status: 2, message: "--id: the bridge has no accessory \(target) (accessories: \(known.isEmpty ? "none" : known))")
        }
        let chosen = try choose(groups: groups, for: accessory, selection: selection)
        if let owner = byAddress[chosen.address], owner.id != accessory.id {
            throw Failure(
                status: 2,
                message:
                    "BlueZ device \(chosen.address) is accessory \(owner.label) itself: its IRK is that accessory's, not \(accessory.label)'s"
            )
        }
        return groups.map { devices in
            guard devices[0].address == chosen.address, let key = usableKey(devices) else {
                return Entry(devices: devices, outcome: .skip("not imported: --id \(accessory.id) imports from one device only"))
            }
            let because =
                chosen.address == accessory.id || chosen.address == accessory.alias
                ? identityReason(accessory, chosen.address)
                : selection.device != nil ? "chosen with --device and --id" : "its name is the accessory's, chosen with --id"
            return Entry(devices: devices, outcome: .importInto(accessory, key, because: because))
        }
    }

    /// The device whose IRK goes to `accessory` under `--id`: the one `--device` names, or the
    /// one at the accessory's own address (its id or its alias), or the only one with an IRK
    /// named like the accessory.
    static func choose(
        groups: [[BlueZPairings.Device]], for accessory: ListedAccessory, selection: Selection
    ) throws(Failure)
        -> BlueZPairings.Device
    {
        if selection.device != nil {
            // parse() already kept only that device.
            let devices = groups[0]
            guard usableKey(devices) != nil else {
                throw Failure(status: 2, message: "BlueZ device \(devices[0].address): \(reasonWithoutKey(devices))")
            }
            return devices[0]
        }
        let withKeys = groups.filter { usableKey($0) != nil }
        if let own = withKeys.first(where: { $0[0].address == accessory.id || $0[0].address == accessory.alias }) { return own[0] }
        let wanted = comparable(accessory.name)
        let named = withKeys.filter { devices in
            devices.contains { [$0.name, $0.alias].contains { $0.map(comparable) == wanted } }
        }
        switch named.count {
        case 1: return named[0][0]
        case 0:
            let known = withKeys.map(label).joined(separator: ", ")
            throw Failure(
                status: 2,
                message:
                    "no BlueZ device with an IRK is named \"\(TerminalText.sanitised(accessory.name))\" (devices with an IRK: \(known.isEmpty ? "none" : known)); name the device with --device ADDR"
            )
        default:
            let addresses = named.map(\.[0].address.description).joined(separator: ", ")
            throw Failure(
                status: 2,
                message:
                    "\(named.count) BlueZ devices with an IRK are named \"\(TerminalText.sanitised(accessory.name))\" (\(addresses)): name the right one with --device ADDR"
            )
        }
    }

    /// The same device paired with several adapters appears once per adapter: one group each.
    static func group(_ devices: [BlueZPairings.Device]) -> [[BlueZPairings.Device]] {
        Dictionary(grouping: devices, by: \.address).values.sorted { $0[0].address < $1[0].address }
    }

    /// The group's IRK, when its adapters agree on one.
    static func usableKey(_ devices: [BlueZPairings.Device]) -> AccessoryKey? {
        let keys = Set(devices.compactMap(\.key))
        return keys.count == 1 ? keys.first : nil
    }

    static func reasonWithoutKey(_ devices: [BlueZPairings.Device]) -> String {
        if Set(devices.compactMap(\.key)).count > 1 {
            return "skipped: its adapters hold different IRKs for it; choose one with --adapter ADDR"
        }
        guard case .failure(let problem) = devices[0].identityResolvingKey else { return "skipped" }
        return "skipped: \(problem)"
    }

    static func identityReason(_ accessory: ListedAccessory, _ address: BluetoothAddress) -> String {
        (address == accessory.id ? "its id is this device's identity address" : "its alias is this device's identity address")
            + (accessory.hasIRK ? "; replaces the IRK it has" : "")
    }

    static func describe(_ outcome: Outcome) -> String {
        switch outcome {
        case .importInto(let accessory, _, _): "imports into \(accessory.label)"
        case .skip(let reason): reason
        }
    }

    /// Names as people type them: case, surrounding spaces and the kind of apostrophe (Apple
    /// names accessories "Alice’s AirPods" with U+2019) do not tell two names apart.
    static func comparable(_ name: String) -> String {
        name.trimmingWhitespace.lowercased().replacing("\u{2019}", with: "'")
            .replacing("\u{2018}", with: "'")
    }

    // MARK: - Input

    static func parse(_ options: CommandArguments) throws(Failure) -> Selection {
        var selection = Selection()
        selection.directory = options["--bluetooth-dir"] ?? BlueZPairings.defaultDirectory
        selection.adapter = try address(of: "--adapter", in: options)
        selection.device = try address(of: "--device", in: options)
        selection.accessory = try address(of: "--id", in: options)
        selection.dryRun = options.has("--dry-run")
        return selection
    }

    static func address(of flag: String, in options: CommandArguments) throws(Failure) -> BluetoothAddress? {
        guard let text = options[flag] else { return nil }
        guard let address = BluetoothAddress(text) else {
            throw Failure(status: 2, message: "\(flag) '\(text)' is not a Bluetooth address (A1:B2:C3:D4:E5:F6)")
        }
        return address
    }

    static func parseAccessories(_ message: MQTTMessage, topic: String) throws(Failure) -> [ListedAccessory] {
        guard let accessories = ListedAccessory.list(message.payload) else {
            throw Failure(status: 1, message: "\(topic) is not a JSON array: is the broker's \(topic) aabridge's?")
        }
        return accessories
    }
}
