import AccessoryKit
import AccessoryLink
import Configuration
import Telemetry

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// `aabridge keys fetch-airpods` and `aabridge keys import-macos`: an accessory's IRK and
/// encryption key from where AirPods owners actually have them, the AirPods themselves (Apple's
/// accessory protocol over L2CAP, `AccessoryLink`) or a Mac's Keychain (`MacKeychainExport`),
/// set through the running bridge's `accessory/keys` (`KeysDelivery`) as `import-bluez` does.
///
/// The accessory is the one `--id` names (its id, its alias, or its name; a name more than one
/// accessory has is refused), or else the one whose id or alias is the AirPods' address. A key
/// is never printed. Exit status as `import-bluez`'s: 1 for the broker, the bridge or the
/// AirPods, 2 for a usage or input error.
enum KeysFetchCommand {
    static let fetchUsage = """
        usage: aabridge keys fetch-airpods --device ADDR [--config PATH] [--id ID] [--dry-run]

        Reads the IRK and the encryption key from AirPods paired and connected to this box
        (Apple's accessory protocol, L2CAP PSM 0x1001, BlueZ) and sets them through the running
        bridge. Needs root (or CAP_NET_RAW). Keys are never printed.

        \(CommandOption.helpLines([device, fetchID, .config, fetchDryRun]))
        """
    static let macUsage = """
        usage: aabridge keys import-macos FILE [--config PATH] [--id ID] [--dry-run]

        Sets an accessory's IRK and encryption key from a Mac's Keychain: FILE holds what
          security find-generic-password -a ADDR -s MobileBluetooth -g /Library/Keychains/System.keychain
        prints (both its output and its error stream, 2>&1), or its -w output. Keys are never printed.

        \(CommandOption.helpLines([macID, .config, macDryRun]))
        """
    static let device = CommandOption(
        "--device", value: "ADDR", help: "the AirPods' Bluetooth (BR/EDR) address, as bluetoothctl devices shows it")
    static let fetchID = CommandOption("--id", value: "ID", help: "the accessory: its id, alias or name (default: the one at ADDR)")
    static let fetchDryRun = CommandOption("--dry-run", help: "read the keys and say which accessory would get them; send nothing")
    /// import-macos takes `--device` as fetch-airpods does, without showing it: the item names the address.
    static let macDevice = CommandOption("--device", value: "ADDR", help: nil)
    static let macID = CommandOption(
        "--id", value: "ID", help: "the accessory: its id, alias or name (default: the one at the item's address)")
    static let macDryRun = CommandOption("--dry-run", help: "say which accessory would get the keys; send nothing")
    /// What each accepts, in the order a usage error lists them.
    static let fetchOptions = [CommandOption.config, device, fetchID, fetchDryRun]
    static let macOptions = [CommandOption.config, macDevice, macID, macDryRun]
    /// For tests that play the AirPods: a Unix SOCK_SEQPACKET socket path used instead of the
    /// L2CAP channel (the exchange, the matching and the delivery are the real ones).
    static let peerSocketVariable = "AABRIDGE_AAP_PEER_SOCKET"

    static func run(_ subcommand: String, options: CommandArguments) async -> Int32 {
        do throws(KeysCommand.Failure) {
            if subcommand == "fetch-airpods" { return try await fetchAirPods(options: options) }
            guard let file = options.positional else {
                throw KeysCommand.Failure(status: 2, message: "name the export FILE\n\n\(macUsage)")
            }
            return try await importMacOS(file: file, options: options)
        } catch {
            printError("aabridge keys \(subcommand): \(error.message)")
            return error.status
        }
    }

    static func fetchAirPods(options: CommandArguments) async throws(KeysCommand.Failure) -> Int32 {
        guard let device = try KeysCommand.address(of: "--device", in: options) else {
            throw KeysCommand.Failure(
                status: 2, message: "--device ADDR is required (the AirPods' address: bluetoothctl devices)\n\n\(fetchUsage)")
        }
        guard let configuration = Command.loadConfiguration(options) else { return ConfigurationErrors.exitStatus }
        // The keys first: nothing reaches the broker when the AirPods cannot be read.
        let keys: ProximityKeys
        do {
            let socket = try openChannel(to: device)
            keys = try ProximityKeysFetch.run(over: socket)
        } catch {
            throw KeysCommand.Failure(status: 1, message: "\(device): \(error.message)")
        }
        guard let irk = AccessoryKey(bytes: keys.irk, isHexText: true) else {
            throw KeysCommand.Failure(status: 1, message: "\(device): the AirPods' IRK is not 16 bytes")
        }
        let encryptionKey = keys.encryptionKey.flatMap { AccessoryKey(bytes: $0, isHexText: true) }
        print(
            "\(device): read the IRK\(encryptionKey == nil ? " (no encryption key)" : " and the encryption key") over the accessory protocol"
        )
        return try await deliver(
            irk: irk, encryptionKey: encryptionKey, address: device, source: "the AirPods \(device)", configuration: configuration,
            options: options)
    }

    static func importMacOS(file: String, options: CommandArguments) async throws(KeysCommand.Failure) -> Int32 {
        // Bounded before reading: FileManager's size is 0 for a device and its read is whole.
        let contents: [UInt8]
        switch BoundedFile.read(file, limit: MacKeychainExport.maximumSize) {
        case .success(let bytes): contents = bytes
        case .failure(.tooLarge(let size, _)):
            throw KeysCommand.Failure(status: 2, message: "\(file): \(MacKeychainExport.ReadError.tooLarge(size))")
        case .failure(let problem): throw KeysCommand.Failure(status: 2, message: "cannot read \(file): \(problem)")
        }
        let text = String(decoding: contents, as: UTF8.self)
        let export: MacKeychainExport
        do {
            export = try MacKeychainExport.parse(text)
        } catch {
            throw KeysCommand.Failure(status: 2, message: "\(file): \(error)")
        }
        guard let configuration = Command.loadConfiguration(options) else { return ConfigurationErrors.exitStatus }
        return try await deliver(
            irk: export.irk, encryptionKey: export.encryptionKey, address: export.address, source: file,
            configuration: configuration, options: options)
    }

    static func openChannel(to device: BluetoothAddress) throws(AccessoryLinkError) -> PacketSocket {
        if let path = ProcessInfo.processInfo.environment[peerSocketVariable] {
            let descriptor = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0)
            if descriptor < 0 { throw .system(call: "socket", errno: errno) }
            let channel = PacketSocket(descriptor: descriptor)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { buffer in
                for (index, byte) in path.utf8.prefix(buffer.count - 1).enumerated() { buffer[index] = byte }
            }
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            if result < 0 { throw .accessoryNotConnected(errno: errno) }
            return channel
        }
        return try L2CAPConnector().connect(to: device.bytes)
    }

    static func deliver(
        irk: AccessoryKey, encryptionKey: AccessoryKey?, address: BluetoothAddress?, source: String,
        configuration: BridgeConfiguration, options: CommandArguments
    ) async throws(KeysCommand.Failure) -> Int32 {
        let dryRun = options.has("--dry-run")
        let delivery = try await KeysDelivery.open(configuration, requireOnline: !dryRun)
        do {
            let status = try await deliver(
                irk: irk, encryptionKey: encryptionKey, address: address, source: source, delivery: delivery, options: options)
            await delivery.close()
            return status
        } catch {
            await delivery.close()
            throw error
        }
    }

    static func deliver(
        irk: AccessoryKey, encryptionKey: AccessoryKey?, address: BluetoothAddress?, source: String, delivery: KeysDelivery,
        options: CommandArguments
    ) async throws(KeysCommand.Failure) -> Int32 {
        let accessory = try target(delivery.accessories, id: options["--id"], address: address)
        let what = encryptionKey == nil ? "IRK" : "IRK and encryption key"
        if options.has("--dry-run") {
            print("\(source): would set the \(what) of \(accessory.label)")
            return 0
        }
        switch try await delivery.send(irk: irk, encryptionKey: encryptionKey, to: accessory) {
        case .silent:
            throw KeysCommand.Failure(status: 1, message: delivery.silentMessage)
        case .refused(let code, let message):
            throw KeysCommand.Failure(status: 1, message: "the bridge refused the keys for \(accessory.label): \(code): \(message)")
        case .stored(let irkSet, let encryptionKeySet):
            print(
                "\(source): set the \(what) of \(accessory.label); the bridge reports: IRK \(irkSet ? "set" : "NOT set"), encryption key \(encryptionKeySet ? "set" : "not set")"
            )
            return irkSet && (encryptionKey == nil || encryptionKeySet) ? 0 : 1
        }
    }

    /// The accessory `--id` names (id, alias, or a name only one accessory has), or else the
    /// one whose id or alias is `address`.
    static func target(
        _ accessories: [ListedAccessory], id: String?, address: BluetoothAddress?
    ) throws(KeysCommand.Failure)
        -> ListedAccessory
    {
        let known = accessories.map(\.label).joined(separator: ", ")
        let list = known.isEmpty ? "none" : known
        if let id {
            if let wanted = BluetoothAddress(id) {
                guard let accessory = accessories.first(where: { $0.id == wanted }) ?? accessories.first(where: { $0.alias == wanted })
                else { throw KeysCommand.Failure(status: 2, message: "--id: the bridge has no accessory \(wanted) (accessories: \(list))") }
                return accessory
            }
            let named = accessories.filter { KeysCommand.comparable($0.name) == KeysCommand.comparable(id) }
            switch named.count {
            case 1: return named[0]
            case 0: throw KeysCommand.Failure(status: 2, message: "--id: no accessory is named \"\(id)\" (accessories: \(list))")
            default:
                throw KeysCommand.Failure(
                    status: 2,
                    message:
                        "--id: \(named.count) accessories are named \"\(id)\" (\(named.map(\.id.description).joined(separator: ", "))): name the right one by its id"
                )
            }
        }
        guard let address else {
            throw KeysCommand.Failure(status: 2, message: "name the accessory with --id ID (accessories: \(list))")
        }
        guard let accessory = accessories.first(where: { $0.id == address || $0.alias == address }) else {
            throw KeysCommand.Failure(
                status: 2, message: "no accessory has the id or alias \(address): name it with --id ID (accessories: \(list))")
        }
        return accessory
    }
}
