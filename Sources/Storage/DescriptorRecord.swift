import AccessoryKit
import Foundation

/// The stored form of a `DiscoveryDescriptor`: compact JSON in the `descriptor` column.
///
/// The descriptor is kept with the accessory (not looked up by product name) because the
/// configured product may change or disappear while the accessory stays paired; restoring it
/// must give back the very descriptor it was discovered with. JSON rather than twelve columns
/// because nothing queries inside it and new descriptor fields then need no migration
/// (absent keys decode as unset). Bytes are upper-case hex, UUIDs their dashed 128-bit form.
struct DescriptorRecord: Codable, Equatable {
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
        // Defaults are left out so a typical descriptor stays a few dozen bytes.
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

    /// The descriptor, or nil when a field does not parse (a damaged row).
    var descriptor: DiscoveryDescriptor? {
        var descriptor = DiscoveryDescriptor()
        descriptor.bluetoothCompanyIdentifier = company
        if let service {
            guard let uuid = BluetoothUUID(service) else { return nil }
            descriptor.bluetoothServiceUUID = uuid
        }
        descriptor.bluetoothNameSubstring = name
        if let nameCompare {
            guard let compare = DiscoveryDescriptor.NameCompare(rawValue: nameCompare) else { return nil }
            descriptor.bluetoothNameCompare = compare
        }
        func bytes(_ text: String?) -> [UInt8]?? {
            guard let text else { return .some(nil) }
            guard let bytes = Hex.bytes(text) else { return nil }
            return .some(bytes)
        }
        guard let manufacturerBlob = bytes(manufacturerBlob), let manufacturerMask = bytes(manufacturerMask),
              let serviceBlob = bytes(serviceBlob), let serviceMask = bytes(serviceMask)
        else { return nil }
        descriptor.bluetoothManufacturerDataBlob = manufacturerBlob
        descriptor.bluetoothManufacturerDataMask = manufacturerMask
        descriptor.bluetoothServiceDataBlob = serviceBlob
        descriptor.bluetoothServiceDataMask = serviceMask
        if let range {
            guard let value = DiscoveryDescriptor.Range(rawValue: range) else { return nil }
            descriptor.bluetoothRange = value
        }
        descriptor.ssid = ssid
        descriptor.ssidPrefix = ssidPrefix
        descriptor.supportedOptions = .init(rawValue: options ?? 0)
        return descriptor
    }

    /// The JSON text stored in the `descriptor` column.
    static func encode(_ descriptor: DiscoveryDescriptor) -> String {
        let encoder = JSONEncoder()
        // Sorted keys make the text stable, so equal descriptors are equal rows.
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a struct of optionals and strings cannot fail.
        let data = (try? encoder.encode(DescriptorRecord(descriptor))) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// The descriptor in `text`, or nil when it is not a valid record.
    static func decode(_ text: String) -> DiscoveryDescriptor? {
        guard let record = try? JSONDecoder().decode(DescriptorRecord.self, from: Data(text.utf8)) else { return nil }
        return record.descriptor
    }
}
