import AccessoryKit

/// The AirPods keys a Mac keeps, as `security` prints them: the `MobileBluetooth` generic
/// password of the AirPods' address in the System keychain,
///
/// ```sh
/// security find-generic-password -a AA:BB:CC:DD:EE:FF -s MobileBluetooth -g /Library/Keychains/System.keychain
/// ```
///
/// whose password is a property list with `MagicAccIRK` and `MagicAccEncKey` (docs/identity.md).
/// `-g` prints the attributes (the account, `"acct"<blob>="AA:BB:..."`, is the AirPods' address)
/// and `password: "..."` with the plist on one line, escaped (`\012` for a newline), or
/// `password: 0x<hex>` when it has bytes `security` will not print as text; `-w` prints the
/// password alone. All these are read. A key's value is taken from the `<string>` (CAPod's
/// get_airpod_keys.sh reads it so) or `<data>` element after its `<key>`, and read as any key
/// is (32 hex digits, with or without separators, or base64: `AccessoryKey.parse`).
///
/// Unverified: no export from a real Mac was found in public sources, only CAPod's script that
/// reads one; which text the values hold (hex or base64) is not documented, so both are taken.
public struct MacKeychainExport: Sendable {
    /// An export is a few kilobytes; anything much larger is not one.
    public static let maximumSize = 256 * 1024

    public var irk: AccessoryKey
    public var encryptionKey: AccessoryKey?
    /// The account of the keychain item: the AirPods' address, when the export shows it.
    public var address: BluetoothAddress?

    public enum ReadError: Error, Equatable, Sendable, CustomStringConvertible {
        case tooLarge(Int)
        case noIRK
        case badKey(name: String, AccessoryKey.FormatError)

        public var description: String {
            switch self {
            case .tooLarge(let size): "\(size) bytes: not a Keychain export (at most \(MacKeychainExport.maximumSize))"
            case .noIRK:
                "no MagicAccIRK in it: export the AirPods' MobileBluetooth item with `security find-generic-password -a ADDR -s MobileBluetooth -g /Library/Keychains/System.keychain` (docs/identity.md)"
            case .badKey(let name, let problem): "\(name) is not a key: \(problem)"
            }
        }
    }

    public static func parse(_ text: String) throws(ReadError) -> MacKeychainExport {
        guard text.utf8.count <= maximumSize else { throw .tooLarge(text.utf8.count) }
        let plist = unescaped(decodedHexPassword(text) ?? text)
        guard let irkText = value(of: "MagicAccIRK", in: plist) else { throw .noIRK }
        let irk = try key(irkText, name: "MagicAccIRK")
        let encryptionKey = try value(of: "MagicAccEncKey", in: plist).map { text throws(ReadError) in
            try key(text, name: "MagicAccEncKey")
        }
        return MacKeychainExport(irk: irk, encryptionKey: encryptionKey, address: account(in: text))
    }

    static func key(_ text: String, name: String) throws(ReadError) -> AccessoryKey {
        switch AccessoryKey.parse(text) {
        case .success(let key): return key
        case .failure(let problem): throw .badKey(name: name, problem)
        }
    }

    /// The text of the `<string>` or `<data>` element after `<key>NAME</key>`.
    static func value(of name: String, in plist: String) -> String? {
        guard let keyRange = plist.firstRange(of: "<key>\(name)</key>") else { return nil }
        let rest = plist[keyRange.upperBound...]
        for tag in ["string", "data"] {
            guard let open = rest.firstRange(of: "<\(tag)>"),
                rest[rest.startIndex..<open.lowerBound].allSatisfy({ $0.isWhitespace }),
                let close = rest[open.upperBound...].firstRange(of: "</\(tag)>")
            else { continue }
            return String(rest[open.upperBound..<close.lowerBound]).filter { !$0.isWhitespace }
        }
        return nil
    }

    /// `password: 0x3C3F786D...`: the password's bytes in hex, as text.
    static func decodedHexPassword(_ text: String) -> String? {
        guard let marker = text.firstRange(of: "password: 0x") else { return nil }
        let digits = text[marker.upperBound...].prefix { $0.isHexDigit }
        guard digits.count >= 2, digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            guard let byte = UInt8(digits[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `security` escapes a printed password's control characters as octal (`\012`) and its
    /// quotes (`\"`): undone, so that the elements read as the plist has them.
    static func unescaped(_ text: String) -> String {
        text.replacing("\\012", with: "\n").replacing("\\011", with: "\t").replacing("\\015", with: "\r")
            .replacing("\\\"", with: "\"")
    }

    /// `"acct"<blob>="AA:BB:CC:DD:EE:FF"`.
    static func account(in text: String) -> BluetoothAddress? {
        guard let marker = text.firstRange(of: "\"acct\"<blob>=\"") else { return nil }
        let value = text[marker.upperBound...].prefix { $0 != "\"" }
        return BluetoothAddress(String(value))
    }
}
