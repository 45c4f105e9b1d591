import AccessoryKit
import Foundation
import Telemetry
import TestSupport
import Testing

/// `MacKeychainExport` on a sample of what `security find-generic-password -g` prints for the
/// AirPods' MobileBluetooth item. The sample (Tests/Fixtures/keychain) is constructed: the
/// attribute lines as `security` prints any generic password, the plist keys as CAPod's
/// get_airpod_keys.sh reads them (`<key>MagicAccIRK</key>...<string>...</string>`); no export
/// from a real Mac was found, so the values' text (hex here, base64 in a variant) is unverified.
@Suite("Mac Keychain export")
struct MacKeychainExportTests {
    static let irk: [UInt8] = [0xEC, 0x02, 0x34, 0xA3, 0x57, 0xC8, 0xAD, 0x05, 0x34, 0x10, 0x10, 0xA6, 0x0A, 0x39, 0x7D, 0x9B]
    static let encryptionKey: [UInt8] = Array(0x10...0x1F)
    static var sample: String {
        get throws {
            try String(contentsOfFile: Repository.file("Tests/Fixtures/keychain/mobilebluetooth-security-g.txt"), encoding: .utf8)
        }
    }

    @Test("the -g output: both keys and the item's address")
    func securityOutput() throws {
        let export = try MacKeychainExport.parse(try Self.sample)
        #expect(export.irk.bytes == Self.irk)
        #expect(export.encryptionKey?.bytes == Self.encryptionKey)
        #expect(export.address == BluetoothAddress("A1:B2:C3:D4:E5:F6"))
        #expect(!"\(export)".lowercased().contains("ec0234"), "the keys are redacted")
    }

    @Test("the -w output (the plist alone, unescaped), and <data> base64 values")
    func passwordOnly() throws {
        let base64IRK = Data(Self.irk.reversed()).base64EncodedString()
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0">
            <dict>
            \t<key>MagicAccIRK</key>
            \t<data>
            \t\(base64IRK)
            \t</data>
            </dict>
            </plist>
            """
        let export = try MacKeychainExport.parse(plist)
        // Base64 is the Keychain's reversed form (AccessoryKey.parse): read back most significant first.
        #expect(export.irk.bytes == Self.irk)
        #expect(export.encryptionKey == nil)
        #expect(export.address == nil)
    }

    @Test("a password `security` prints as 0x hex is decoded first")
    func hexPassword() throws {
        let plist = "<dict><key>MagicAccIRK</key><string>\(Self.irk.map { String(format: "%02x", $0) }.joined())</string></dict>"
        let hex = plist.utf8.map { String(format: "%02X", $0) }.joined()
        let export = try MacKeychainExport.parse(
            "attributes:\n    \"acct\"<blob>=\"A1:B2:C3:D4:E5:F6\"\npassword: 0x\(hex)  \"<dict>...\"\n")
        #expect(export.irk.bytes == Self.irk)
    }

    @Test("no MagicAccIRK, a value that is not a key, or a file far too large: an error naming it")
    func errors() throws {
        #expect(throws: MacKeychainExport.ReadError.noIRK) { try MacKeychainExport.parse("keychain: \"x\"\npassword: \"<dict></dict>\"") }
        let badEncryptionKey = try Self.sample.replacingOccurrences(of: "10 11 12 13 14 15 16 17 18 19 1A 1B 1C 1D 1E 1F", with: "10 11")
        #expect(throws: MacKeychainExport.ReadError.badKey(name: "MagicAccEncKey", .wrongLength(2))) {
            try MacKeychainExport.parse(badEncryptionKey)
        }
        let badIRK = try Self.sample.replacingOccurrences(of: "EC 02 34", with: "not a key")
        do {
            _ = try MacKeychainExport.parse(badIRK)
            Issue.record("a bad IRK was read")
        } catch {
            guard case .badKey(let name, _) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(name == "MagicAccIRK")
            #expect(!"\(error)".contains("A3 57"), "the message never shows the value")
        }
        #expect(throws: MacKeychainExport.ReadError.tooLarge(MacKeychainExport.maximumSize + 1)) {
            try MacKeychainExport.parse(String(repeating: "x", count: MacKeychainExport.maximumSize + 1))
        }
    }
}
