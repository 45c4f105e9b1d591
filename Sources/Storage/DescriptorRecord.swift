import AccessoryKit
import JSON

/// The stored form of a `DiscoveryDescriptor`: compact JSON in the `descriptor` column.
///
/// The descriptor is kept with the accessory (not looked up by product name) because the
/// configured product may change or disappear while the accessory stays paired; restoring it
/// must give back the very descriptor it was discovered with. JSON rather than twelve columns
/// because nothing queries inside it and new descriptor fields then need no migration
/// (absent keys decode as unset). Bytes are upper-case hex, UUIDs their dashed 128-bit form.
struct DescriptorRecord: Equatable {
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

    /// The JSON text stored in the `descriptor` column: a compact object of the set fields
    /// with sorted keys, so equal descriptors are equal rows. Existing databases hold the
    /// same format (Foundation `JSONEncoder` output with sorted keys); StorageTests checks both.
    static func encode(_ descriptor: DiscoveryDescriptor) -> String {
        let record = DescriptorRecord(descriptor)
        let fields: [(String, JSONValue?)] = [
            ("company", record.company.map { .int(Int($0)) }),
            ("service", record.service.map(JSONValue.string)),
            ("name", record.name.map(JSONValue.string)),
            ("nameCompare", record.nameCompare.map(JSONValue.string)),
            ("manufacturerBlob", record.manufacturerBlob.map(JSONValue.string)),
            ("manufacturerMask", record.manufacturerMask.map(JSONValue.string)),
            ("serviceBlob", record.serviceBlob.map(JSONValue.string)),
            ("serviceMask", record.serviceMask.map(JSONValue.string)),
            ("range", record.range.map(JSONValue.string)),
            ("ssid", record.ssid.map(JSONValue.string)),
            ("ssidPrefix", record.ssidPrefix.map(JSONValue.string)),
            ("options", record.options.map { .int(Int($0)) }),
        ]
        let pairs = fields.compactMap { key, value in value.map { (key, $0) } }
        return JSONValue.object(pairs.sorted { $0.0 < $1.0 }).serialized
    }

    /// The descriptor in `text`, or nil when it is not a valid record: not a JSON object, or a
    /// field of the wrong type or out of range. Absent and null fields are unset; unknown keys
    /// are ignored (a newer field read by an older bridge).
    static func decode(_ text: String) -> DiscoveryDescriptor? {
        // Stored text was written by this code: no size limit beyond what SQLite returned.
        let bytes = Array(text.utf8)
        guard let value = try? JSONParser.parse(bytes, maximumSize: bytes.count), case .object(let pairs) = value else { return nil }
        var fields: [String: JSONValue] = [:]
        for (key, value) in pairs where !value.isNull { fields[key] = value }
        var record = DescriptorRecord(DiscoveryDescriptor())
        func string(_ key: String) -> String?? {
            guard let value = fields[key] else { return .some(nil) }
            return value.stringValue.map { .some($0) }
        }
        func integer<T: FixedWidthInteger>(_ key: String, as type: T.Type) -> T?? {
            guard let value = fields[key] else { return .some(nil) }
            guard case .int(let number) = value, let exact = T(exactly: number) else { return nil }
            return .some(exact)
        }
        guard let company = integer("company", as: UInt16.self), let service = string("service"), let name = string("name"),
            let nameCompare = string("nameCompare"), let manufacturerBlob = string("manufacturerBlob"),
            let manufacturerMask = string("manufacturerMask"), let serviceBlob = string("serviceBlob"),
            let serviceMask = string("serviceMask"), let range = string("range"), let ssid = string("ssid"),
            let ssidPrefix = string("ssidPrefix"), let options = integer("options", as: UInt8.self)
        else { return nil }
        record.company = company
        record.service = service
        record.name = name
        record.nameCompare = nameCompare
        record.manufacturerBlob = manufacturerBlob
        record.manufacturerMask = manufacturerMask
        record.serviceBlob = serviceBlob
        record.serviceMask = serviceMask
        record.range = range
        record.ssid = ssid
        record.ssidPrefix = ssidPrefix
        record.options = options
        return record.descriptor
    }
}
