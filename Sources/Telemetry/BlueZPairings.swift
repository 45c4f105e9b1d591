import AccessoryKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The pairings BlueZ (the Linux Bluetooth daemon) keeps on disk, read for the keys users
/// already have: a Linux gateway box that paired an accessory holds its IRK.
///
/// Layout (BlueZ doc/settings-storage.txt): `<directory>/<adapter address>/<device address>/info`,
/// both addresses upper-case with colons, next to `<adapter>/settings` and `<adapter>/cache/`.
/// `info` is a GLib key file (INI): `[General]` with `Name=` (and `Alias=` when the user renamed
/// the device), and `[IdentityResolvingKey]` with `Key=` when the device distributed an IRK while
/// pairing. The device directory's name is the device's identity address.
///
/// Byte order: BlueZ writes the key *least* significant byte first. src/adapter.c `store_irk`
/// formats the 16 bytes of the key as they came from the kernel, `key[0]` first
/// (`sprintf(str + i * 2, "%2.2X", key[i])`), and `get_irk_info` reads them back in the same
/// order to hand them to the kernel again; the kernel's management interface carries every field
/// least significant byte first (doc/mgmt-api.txt: "All fields are in little-endian byte order"),
/// as SMP does on the air; the kernel keeps the IRK so and reverses it before AES (Linux
/// net/bluetooth/smp.c `smp_e`: "The most significant octet of key corresponds to k[0]",
/// `swap_buf(k, tmp, 16)`). Home Assistant's Private BLE Device documentation has users reverse
/// a key read from an SMP capture for the same reason, and users matching RPAs with a key copied
/// from `info` report that it only resolves once reversed. aabridge keys are most significant
/// byte first (the Bluetooth Core Specification's notation, `AccessoryKey`), so the bytes are
/// reversed here, once, where they leave BlueZ's format.
///
/// A device whose `info` has no usable key is kept, with the reason (``Problem``), so that the
/// caller can say why it was not imported; a file or directory that cannot be read at all is an
/// error naming its path (``ReadError``), since silently skipping it would hide a pairing.
public struct BlueZPairings: Sendable {
    /// Where BlueZ keeps its pairings (`STORAGEDIR`, configurable when BlueZ is built).
    public static let defaultDirectory = "/var/lib/bluetooth"

    /// `info` files are a few hundred bytes; anything much larger is not one.
    public static let maximumInfoSize = 64 * 1024

    /// One paired device as BlueZ stored it under one adapter.
    public struct Device: Sendable, Hashable, CustomStringConvertible {
        /// The adapter (controller) the device is paired with.
        public var adapter: BluetoothAddress
        /// The device's identity address (its directory's name).
        public var address: BluetoothAddress
        /// `[General] Name`, the name the device gave itself.
        public var name: String?
        /// `[General] Alias`, the name the user gave it, when set.
        public var alias: String?
        /// The IRK, most significant byte first, or why there is none.
        public var identityResolvingKey: Result<AccessoryKey, Problem>
        /// The `info` file it was read from.
        public var infoPath: String

        public init(
            adapter: BluetoothAddress, address: BluetoothAddress, name: String?, alias: String?,
            identityResolvingKey: Result<AccessoryKey, Problem>, infoPath: String
        ) {
            self.adapter = adapter
            self.address = address
            self.name = name
            self.alias = alias
            self.identityResolvingKey = identityResolvingKey
            self.infoPath = infoPath
        }

        /// The IRK when there is one.
        public var key: AccessoryKey? { try? identityResolvingKey.get() }

        // Written out so that no future field can bring the key's bytes into a description
        // (AccessoryKey redacts itself, but a description is also what a log line would use).
        public var description: String {
            let key: String
            switch identityResolvingKey {
            case .success: key = "IRK <redacted>"
            case .failure(let problem): key = "no IRK: \(problem)"
            }
            // The name is the device's own choice: sanitised, never printed raw (TerminalText).
            return
                "BlueZ device \(address) on adapter \(adapter) (\(name.map { "\"\(TerminalText.sanitised($0))\"" } ?? "no name"), \(key))"
        }
    }

    /// Why a device's `info` yields no key. The descriptions never repeat the file's text.
    public enum Problem: Error, Hashable, Sendable, CustomStringConvertible {
        /// The device directory has no `info` file (BlueZ keeps only cached attributes there).
        case noInfoFile
        /// No `[IdentityResolvingKey] Key`: the device distributed no IRK when it paired.
        case noKey
        /// `Key` is not 32 hex digits.
        case malformedKey
        /// `Key` is all zeros, which the Core Specification uses for "no IRK".
        case zeroKey
        /// The `info` file is larger than ``BlueZPairings/maximumInfoSize``.
        case tooLarge

        public var description: String {
            switch self {
            case .noInfoFile: "no info file"
            case .noKey: "no [IdentityResolvingKey] in its info file (it gave BlueZ no IRK when it paired)"
            case .malformedKey: "[IdentityResolvingKey] Key is not 32 hex digits"
            case .zeroKey: "[IdentityResolvingKey] Key is all zeros (no IRK)"
            case .tooLarge: "its info file is larger than \(BlueZPairings.maximumInfoSize) bytes: not a BlueZ info file"
            }
        }
    }

    /// A directory or file that could not be read, or an adapter that is not there.
    public struct ReadError: Error, Hashable, Sendable, CustomStringConvertible {
        public var path: String
        public var reason: String
        /// The `errno` behind it, 0 when it is not a system error (an adapter that is not there).
        public var code: Int32

        public init(path: String, reason: String, code: Int32 = 0) {
            self.path = path
            self.reason = reason
            self.code = code
        }

        /// Whether it failed for lack of permission (BlueZ's directory is readable by root only).
        public var isPermissionDenied: Bool { code == EACCES || code == EPERM }

        public var description: String { "cannot read '\(path)': \(reason)" }
    }

    /// The directory read.
    public let directory: String
    /// The adapters read, sorted.
    public let adapters: [BluetoothAddress]
    /// Every device of those adapters, sorted by adapter, then address.
    public let devices: [Device]

    public init(directory: String, adapters: [BluetoothAddress], devices: [Device]) {
        self.directory = directory
        self.adapters = adapters
        self.devices = devices
    }

    /// Reads every adapter's devices, or only `adapter`'s.
    /// - Throws: ``ReadError`` for a directory or `info` file that exists but cannot be read,
    ///   a `directory` that is not there, or an `adapter` that has no directory.
    public static func read(
        directory: String = defaultDirectory, adapter: BluetoothAddress? = nil
    ) throws(ReadError)
        -> BlueZPairings
    {
        var adapters = try addressDirectories(in: directory)
        if let adapter {
            guard adapters.contains(adapter) else {
                let found =
                    adapters.isEmpty ? "it has no adapter directories" : "adapters: \(adapters.map(\.description).joined(separator: ", "))"
                throw ReadError(path: directory, reason: "no adapter \(adapter) here (\(found))")
            }
            adapters = [adapter]
        }
        var devices: [Device] = []
        for adapter in adapters {
            let adapterPath = join(directory, adapter.description)
            for address in try addressDirectories(in: adapterPath) {
                let infoPath = join(join(adapterPath, address.description), "info")
                let fields: (name: String?, alias: String?, key: Result<AccessoryKey, Problem>)
                switch try readInfo(infoPath) {
                case .success(let bytes): fields = parseInfo(bytes)
                case .failure(let problem): fields = (nil, nil, .failure(problem))
                }
                devices.append(
                    Device(
                        adapter: adapter, address: address, name: fields.name, alias: fields.alias,
                        identityResolvingKey: fields.key, infoPath: infoPath))
            }
        }
        return BlueZPairings(directory: directory, adapters: adapters, devices: devices)
    }

    /// The name, alias and IRK of one `info` file's bytes.
    ///
    /// Read as GLib's key-file parser reads it, leniently: `#` comments, blank lines, `\r\n`,
    /// spaces around `=`, repeated groups (merged) and keys (the last wins), localised keys
    /// (`Name[de]`, ignored), and lines it cannot parse (ignored, as they carry nothing needed).
    public static func parseInfo(_ bytes: [UInt8]) -> (name: String?, alias: String?, key: Result<AccessoryKey, Problem>) {
        var group = ""
        var name: String?
        var alias: String?
        var keyText: String?
        for rawLine in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            let line = String(String(decoding: rawLine, as: UTF8.self).trimmingWhitespace)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                if line.hasSuffix("]") { group = String(line.dropFirst().dropLast()) }
                continue
            }
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = String(line[..<equals].trimmingWhitespace)
            let value = String(line[line.index(after: equals)...].trimmingWhitespace)
            switch (group, key) {
            case ("General", "Name"): name = unescaped(value)
            case ("General", "Alias"): alias = unescaped(value)
            case ("IdentityResolvingKey", "Key"): keyText = value
            default: break
            }
        }
        guard let keyText else { return (name, alias, .failure(.noKey)) }
        return (name, alias, decodeKey(keyText))
    }

    /// `Key=`'s value: 32 hex digits, any case, optionally `0x`-prefixed (BlueZ's `get_irk_info`
    /// accepts the prefix), least significant byte first (see the type's documentation).
    public static func decodeKey(_ text: String) -> Result<AccessoryKey, Problem> {
        var digits = Substring(text)
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
        guard digits.utf8.count == 32, let bytes = Hex.decode(digits), let key = AccessoryKey(bytes: bytes.reversed()) else {
            return .failure(.malformedKey)
        }
        guard key.bytes.contains(where: { $0 != 0 }) else { return .failure(.zeroKey) }
        return .success(key)
    }

    // MARK: - Files

    /// The subdirectories of `path` whose names are Bluetooth addresses in BlueZ's form
    /// (`AA:BB:CC:DD:EE:FF`), sorted; anything else (`cache`, `settings`, files) is not a
    /// pairing and is passed over.
    static func addressDirectories(in path: String) throws(ReadError) -> [BluetoothAddress] {
        guard let directory = opendir(path) else {
            let code = errno
            throw ReadError(path: path, reason: reason(code), code: code)
        }
        defer { closedir(directory) }
        var addresses: [BluetoothAddress] = []
        while let entry = readdir(directory) {
            var nameField = entry.pointee.d_name
            let name = withUnsafeBytes(of: &nameField) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            // BlueZ names directories with colons; the 12-digit form is not one of its names.
            guard name.utf8.count == 17, let address = BluetoothAddress(name), isDirectory(join(path, name)) else { continue }
            addresses.append(address)
        }
        return addresses.sorted()
    }

    /// An `info` file's bytes; `.noInfoFile` when there is none. Read bounded and by type
    /// (``BoundedFile``): an `info` that is a FIFO would otherwise hang the command, a device
    /// never end.
    static func readInfo(_ path: String) throws(ReadError) -> Result<[UInt8], Problem> {
        switch BoundedFile.read(path, limit: maximumInfoSize) {
        case .success(let bytes): return .success(bytes)
        case .failure(.missing): return .failure(.noInfoFile)
        case .failure(.tooLarge): return .failure(.tooLarge)
        // Not a pairing BlueZ wrote: named, as a file that cannot be read is.
        case .failure(.notRegular(let kind)): throw ReadError(path: path, reason: "it is \(kind), not a regular file")
        case .failure(.unreadable(let reason, let code)): throw ReadError(path: path, reason: reason, code: code)
        }
    }

    static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    static func reason(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// GLib key-file escapes in a string value: `\s` (a leading space), `\n`, `\t`, `\r`, `\\`.
    static func unescaped(_ value: String) -> String {
        guard value.contains("\\") else { return value }
        var result = ""
        var escaping = false
        for character in value {
            if escaping {
                switch character {
                case "s": result.append(" ")
                case "n": result.append("\n")
                case "t": result.append("\t")
                case "r": result.append("\r")
                case "\\": result.append("\\")
                default: result.append("\\\(character)")
                }
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                result.append(character)
            }
        }
        if escaping { result.append("\\") }
        return result
    }
}
