import AccessoryKit
import Telemetry

/// What an `a{sv}` of BlueZ's `Device1` or `Adapter1` properties says that the source needs;
/// each field nil when the dictionary did not carry it (a `PropertiesChanged` carries only
/// what changed).
struct BlueZProperties {
    var address: BluetoothAddress?
    var addressType: String?
    var rssi: Int?
    var manufacturerData: [ManufacturerData]?
    var serviceData: [ServiceData]?
    var name: String?
    var powered: Bool?
    var supportedMonitorTypes: [String]?

    /// Manufacturer-data and service-data entries kept of one device (BlueZ keeps a handful).
    static let maximumEntries = 16

    /// Whether it says something heard: an advertisement's data or its signal.
    var heardSomething: Bool { rssi != nil || manufacturerData != nil || serviceData != nil }

    /// Reads the `a{sv}` at the reader's position. Each name is compared where sd-bus holds
    /// it (no `String` is made of it); a property not listed here is skipped whole.
    init(_ reader: DBusReader) {
        guard reader.enter(DBusReader.Code.array, "{sv}") else {
            reader.skip()
            return
        }
        var left = 256
        while left > 0, reader.enter(DBusReader.Code.dictEntry, "sv") {
            left -= 1
            if let key = reader.cString() { read(key, reader) }
            reader.exit()
        }
        reader.exit()
    }

    private mutating func read(_ key: UnsafePointer<CChar>, _ reader: DBusReader) {
        func `is`(_ name: StaticString) -> Bool { DBusReader.is(key, name) }
        if `is`("ManufacturerData") {
            manufacturerData = reader.variant("a{qv}") { Self.manufacturerData(reader) }
        } else if `is`("RSSI") {
            rssi = reader.variant("n") { reader.basic(DBusReader.Code.int16, as: Int16.self) }.map(Int.init)
        } else if `is`("ServiceData") {
            serviceData = reader.variant("a{sv}") { Self.serviceData(reader) }
        } else if `is`("Address") {
            address = reader.variant("s") { reader.string() }.flatMap { BluetoothAddress($0) }
        } else if `is`("AddressType") {
            addressType = reader.variant("s") { reader.string() }
        } else if `is`("Name") {
            name = reader.variant("s") { reader.string() }
        } else if `is`("Powered") {
            powered = reader.variant("b") { reader.basic(DBusReader.Code.boolean, as: Int32.self) }.map { $0 != 0 }
        } else if `is`("SupportedMonitorTypes") {
            supportedMonitorTypes = reader.variant("as") { Self.strings(reader) }
        } else {
            reader.skip()
        }
    }

    /// `a{qv}`, each value an `ay`: company identifier and the bytes after it.
    private static func manufacturerData(_ reader: DBusReader) -> [ManufacturerData]? {
        guard reader.enter(DBusReader.Code.array, "{qv}") else { return nil }
        var entries: [ManufacturerData] = []
        while reader.enter(DBusReader.Code.dictEntry, "qv") {
            if let company = reader.basic(DBusReader.Code.uint16, as: UInt16.self),
                let payload = reader.variant("ay", { reader.bytes() }), entries.count < maximumEntries
            {
                entries.append(ManufacturerData(companyIdentifier: company, payload: payload))
            }
            reader.exit()
        }
        reader.exit()
        return entries
    }

    /// `a{sv}`, each key a UUID and each value an `ay`.
    private static func serviceData(_ reader: DBusReader) -> [ServiceData]? {
        guard reader.enter(DBusReader.Code.array, "{sv}") else { return nil }
        var entries: [ServiceData] = []
        while reader.enter(DBusReader.Code.dictEntry, "sv") {
            if let text = reader.string(), let uuid = BluetoothUUID(text), let data = reader.variant("ay", { reader.bytes() }),
                entries.count < maximumEntries
            {
                entries.append(ServiceData(uuid: uuid, data: data))
            }
            reader.exit()
        }
        reader.exit()
        return entries
    }

    private static func strings(_ reader: DBusReader) -> [String]? {
        guard reader.enter(DBusReader.Code.array, "s") else { return nil }
        var strings: [String] = []
        while strings.count < 64, let string = reader.string() { strings.append(string) }
        reader.exit()
        return strings
    }
}
