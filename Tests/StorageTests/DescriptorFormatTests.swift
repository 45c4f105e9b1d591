import AccessoryKit
import Foundation
import Testing

@testable import Storage

private typealias F = StoreFixtures

/// The `descriptor` column of databases written before the store used the JSON module:
/// Foundation's `JSONEncoder` (sorted keys, unescaped slashes) of a Codable record.
@Suite("Descriptor column format")
struct DescriptorFormatTests {
    /// The Codable record those databases were written with, field for field.
    struct FoundationRecord: Codable {
        var company: UInt16?
        var service: String?
        var name: String?
        var nameCompare: String?
        var manufacturerBlob: String?
        var manufacturerMask: String?
        var serviceBlob: String?
        var serviceMask: String?
        var range: String?
        var ssid: String?
        var ssidPrefix: String?
        var options: UInt8?

        init(_ descriptor: DiscoveryDescriptor) {
            company = descriptor.bluetoothCompanyIdentifier
            service = descriptor.bluetoothServiceUUID?.uuidString
            name = descriptor.bluetoothNameSubstring
            nameCompare = descriptor.bluetoothNameCompare == .literal ? nil : descriptor.bluetoothNameCompare.rawValue
            manufacturerBlob = descriptor.bluetoothManufacturerDataBlob.map { Hex.encode($0, uppercase: true) }
            manufacturerMask = descriptor.bluetoothManufacturerDataMask.map { Hex.encode($0, uppercase: true) }
            serviceBlob = descriptor.bluetoothServiceDataBlob.map { Hex.encode($0, uppercase: true) }
            serviceMask = descriptor.bluetoothServiceDataMask.map { Hex.encode($0, uppercase: true) }
            range = descriptor.bluetoothRange == .default ? nil : descriptor.bluetoothRange.rawValue
            ssid = descriptor.ssid
            ssidPrefix = descriptor.ssidPrefix
            options = descriptor.supportedOptions.isEmpty ? nil : descriptor.supportedOptions.rawValue
        }

        var text: String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return String(decoding: try! encoder.encode(self), as: UTF8.self)
        }
    }

    static let descriptors: [DiscoveryDescriptor] = [
        F.fullDescriptor,
        DiscoveryDescriptor(),
        DiscoveryDescriptor(
            bluetoothCompanyIdentifier: 0x004C, bluetoothManufacturerDataBlob: [0x07, 0x19],
            bluetoothManufacturerDataMask: [0xFF, 0xFF]),
        DiscoveryDescriptor(bluetoothServiceUUID: BluetoothUUID("0000180F-0000-1000-8000-00805F9B34FC")),
        DiscoveryDescriptor(bluetoothNameSubstring: "tab\there \\ \"q\" a/b 🎧 \u{7F}", ssid: "net\nline"),
    ]

    @Test("a row as an existing database holds it reads back, and is written the same")
    func literalRow() {
        let row =
            #"{"company":76,"manufacturerBlob":"0710","manufacturerMask":"FFF0","name":"Acme \"Buds\" / ü","nameCompare":"caseInsensitive","options":7,"range":"immediate","service":"0000FE2C-0000-1000-8000-00805F9B34FB","serviceBlob":"00","serviceMask":"","ssid":"AcmeNet","ssidPrefix":"Acme-"}"#
        #expect(DescriptorRecord.decode(row) == F.fullDescriptor)
        #expect(DescriptorRecord.encode(F.fullDescriptor) == row)
    }

    @Test(
        "every descriptor: the stored text is the one Foundation wrote, and Foundation's text reads back",
        arguments: descriptors)
    func sameText(descriptor: DiscoveryDescriptor) {
        let foundation = FoundationRecord(descriptor).text
        #expect(DescriptorRecord.encode(descriptor) == foundation)
        #expect(DescriptorRecord.decode(foundation) == descriptor)
    }

    @Test(
        "damaged rows are refused, unknown keys and nulls are not",
        arguments: [
            (#"{"company":65536}"#, false), (#"{"company":"76"}"#, false), (#"{"options":-1}"#, false),
            (#"{"name":7}"#, false), (#"[]"#, false), (#"{"company":76,"future":{"x":1}}"#, true),
            (#"{"company":null,"name":"Acme"}"#, true),
        ])
    func damaged(text: String, readable: Bool) {
        #expect((DescriptorRecord.decode(text) != nil) == readable, "\(text)")
    }
}
