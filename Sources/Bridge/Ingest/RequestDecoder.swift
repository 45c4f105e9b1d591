import AccessoryKit
import JSON

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

/// Turns `bridge/request/<name>` payloads into engine requests. A payload that is not a JSON
/// object, lacks a required key or has one of the wrong type is refused here with
/// `invalidRequest` and a message naming the key, before the engine sees anything.
public enum RequestDecoder {
    /// Every request name of mqtt-api.md, as text (``RequestName``'s raw values).
    public static let names: Set<String> = Set(RequestName.allCases.map(\.name))

    /// The outcome of decoding: the bridge's own `health` request, or one for the engine.
    public enum Decoded: Hashable, Sendable {
        case health
        case engine(Request)
    }

    /// Whether a request name belongs to AccessoryControlDevice (its errors use that domain);
    /// false for a name that is no request.
    public static func isAccessoryControl(_ name: String) -> Bool {
        RequestName(rawValue: name)?.isAccessoryControl ?? false
    }

    public static func decode(name: String, payload: JSONValue) -> Result<Decoded, ResponseError> {
        let control = isAccessoryControl(name)
        func invalid(_ message: String) -> Result<Decoded, ResponseError> {
            .failure(.invalidRequest(message, accessoryControl: control))
        }
        guard case .object = payload else { return invalid("the payload must be a JSON object") }
        guard let request = RequestName(rawValue: name) else {
            return invalid("unknown request '\(name)'; known: \(names.sorted().joined(separator: ", "))")
        }
        do throws(DecodeError) {
            switch request {
            case .showPicker:
                var products: [String]?
                if let value = payload["products"], !value.isNull {
                    products = try strings(value, key: "products")
                }
                var timeout = DiscoveryTimeout.default
                if let value = payload["timeout"], !value.isNull {
                    if let text = value.stringValue {
                        guard let named = DiscoveryTimeout(name: text) else {
                            throw DecodeError("'timeout' must be default, short, medium, long, unbounded or a number of seconds")
                        }
                        timeout = named
                    } else if let seconds = value.intValue, seconds > 0, seconds <= 86_400 {
                        timeout = .seconds(seconds)
                    } else {
                        throw DecodeError("'timeout' must be default, short, medium, long, unbounded or 1-86400 seconds")
                    }
                }
                return .success(.engine(.showPicker(products: products, timeout: timeout)))
            case .selectCandidate:
                let id = try address(payload, "id")
                let name = try displayName(payload)
                let keys = AccessoryKeys(
                    irk: try keyChange(payload, "irk").applied(to: nil),
                    encryptionKey: try keyChange(payload, "encryption_key").applied(to: nil))
                return .success(.engine(.selectCandidate(id, name: name, keys: keys, sources: try setupSources(payload))))
            case .finishDiscovery: return .success(.engine(.finishDiscovery))
            case .dismissPicker: return .success(.engine(.dismissPicker))
            case .authorize: return .success(.engine(.authorize(try address(payload, "id"))))
            case .failAuthorization: return .success(.engine(.failAuthorization(try address(payload, "id"))))
            case .rename:
                let id = try address(payload, "id")
                guard let name = try displayName(payload) else { throw DecodeError("'name' is required") }
                return .success(.engine(.rename(id, name: name)))
            case .remove: return .success(.engine(.remove(try address(payload, "id"))))
            case .register:
                let id = try address(payload, "id")
                guard let value = payload["capabilities"] else { throw DecodeError("'capabilities' is required") }
                let request = RegistrationRequest(
                    capabilities: try strings(value, key: "capabilities"),
                    placement: try optionalString(payload, "placement"),
                    primarySource: try optionalString(payload, "primary_source"),
                    secondarySource: try optionalString(payload, "secondary_source"))
                return .success(.engine(.register(id, request)))
            case .current: return .success(.engine(.current(try address(payload, "id"))))
            case .invalidate: return .success(.engine(.invalidate(try address(payload, "id"))))
            case .keys:
                let id = try address(payload, "id")
                return .success(
                    .engine(.setKeys(id, irk: try keyChange(payload, "irk"), encryptionKey: try keyChange(payload, "encryption_key"))))
            case .homeSources:
                return .success(.engine(.setHomeSources(try address(payload, "id"), try homeSources(payload))))
            case .alias:
                let id = try address(payload, "id")
                guard payload["address"] != nil else { throw DecodeError("'address' is required (null removes the alias)") }
                return .success(.engine(.setAlias(id, try optionalAddress(payload, "address"))))
            case .reattach:
                return .success(.engine(.reattach(try address(payload, "id"), address: try address(payload, "address"))))
            case .headTracking:
                let id = try address(payload, "id")
                guard let value = payload["active"], !value.isNull else { throw DecodeError("'active' is required") }
                guard let active = value.boolValue else { throw DecodeError("'active' must be true or false") }
                return .success(.engine(.setHeadTracking(id, active: active)))
            case .nameSource:
                let source = try address(payload, "address")
                return .success(.engine(.nameSource(source, try sourceName(payload))))
            case .health: return .success(.health)
            }
        } catch {
            return invalid(error.message)
        }
    }

    struct DecodeError: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    static func address(_ payload: JSONValue, _ key: String) throws(DecodeError) -> BluetoothAddress {
        guard let value = payload[key], !value.isNull else { throw DecodeError("'\(key)' is required") }
        guard let text = value.stringValue else { throw DecodeError("'\(key)' must be a string") }
        guard let address = BluetoothAddress(text) else {
            throw DecodeError("'\(key)' must be a Bluetooth address like A1:B2:C3:D4:E5:F6, not '\(text.prefix(40))'")
        }
        return address
    }

    /// `primary_source` and `secondary_source` of `picker/select`, primary first: a secondary
    /// needs a primary, and the two must differ (as a registration's sources must).
    static func setupSources(_ payload: JSONValue) throws(DecodeError) -> [BluetoothAddress] {
        switch (try optionalAddress(payload, "primary_source"), try optionalAddress(payload, "secondary_source")) {
        case (nil, nil): return []
        case (let primary?, nil): return [primary]
        case (nil, _?): throw DecodeError("'secondary_source' needs a 'primary_source'")
        case (let primary?, let secondary?):
            guard primary != secondary else { throw DecodeError("'primary_source' and 'secondary_source' must differ") }
            return [primary, secondary]
        }
    }

    /// `accessory/home_sources`'s `sources`: 0-2 distinct addresses, in order (`[]` clears them).
    static func homeSources(_ payload: JSONValue) throws(DecodeError) -> [BluetoothAddress] {
        guard let value = payload["sources"], !value.isNull else { throw DecodeError("'sources' is required ([] clears them)") }
        guard let values = value.arrayValue else { throw DecodeError("'sources' must be an array of Bluetooth addresses") }
        guard values.count <= 2 else { throw DecodeError("'sources' takes at most 2 addresses, primary first (\(values.count) given)") }
        var sources: [BluetoothAddress] = []
        for (index, element) in values.enumerated() {
            guard let text = element.stringValue, let source = BluetoothAddress(text) else {
                throw DecodeError("'sources'[\(index)] must be a Bluetooth address like A1:B2:C3:D4:E5:F6")
            }
            guard !sources.contains(source) else { throw DecodeError("'sources'[\(index)]: \(source) is given twice") }
            sources.append(source)
        }
        return sources
    }

    /// The longest name a source may be given at run time.
    static let maximumSourceNameLength = 64

    /// `source/name`'s `name`: 1-64 characters once trimmed, or `null` (the run-time name is
    /// removed); required.
    static func sourceName(_ payload: JSONValue) throws(DecodeError) -> String? {
        guard let value = payload["name"] else { throw DecodeError("'name' is required (null removes the name)") }
        if value.isNull { return nil }
        guard let text = value.stringValue else { throw DecodeError("'name' must be a string or null") }
        let trimmed = String(text.trimmingWhitespace)
        guard !trimmed.isEmpty, trimmed.count <= maximumSourceNameLength else {
            throw DecodeError("'name' must be 1-\(maximumSourceNameLength) characters")
        }
        return trimmed
    }

    /// An address that may be absent or `null` (nil then); otherwise as ``address(_:_:)``.
    static func optionalAddress(_ payload: JSONValue, _ key: String) throws(DecodeError) -> BluetoothAddress? {
        guard let value = payload[key], !value.isNull else { return nil }
        return try address(payload, key)
    }

    /// A key as identity.md allows it (32 hex digits or the Keychain's base64); `null` deletes
    /// it, an absent key is kept. The message names the field and never repeats the value.
    static func keyChange(_ payload: JSONValue, _ key: String) throws(DecodeError) -> KeyChange {
        guard let value = payload[key] else { return .keep }
        if value.isNull { return .delete }
        guard let text = value.stringValue else { throw DecodeError("'\(key)' must be a string or null") }
        switch AccessoryKey.parse(text) {
        case .success(let parsed): return .set(parsed)
        case .failure(let error): throw DecodeError("'\(key)' \(error.description)")
        }
    }

    /// An accessory's `name` (rename, select): trimmed, 1 to ``Accessory/maximumNameLength``
    /// characters; `nil` when absent.
    static func displayName(_ payload: JSONValue) throws(DecodeError) -> String? {
        guard let name = try optionalString(payload, "name") else { return nil }
        let trimmed = String(name.trimmingWhitespace)
        guard !trimmed.isEmpty, trimmed.count <= Accessory.maximumNameLength else {
            throw DecodeError("'name' must be 1-\(Accessory.maximumNameLength) characters")
        }
        return trimmed
    }

    static func optionalString(_ payload: JSONValue, _ key: String) throws(DecodeError) -> String? {
        guard let value = payload[key], !value.isNull else { return nil }
        guard let text = value.stringValue else { throw DecodeError("'\(key)' must be a string") }
        return text
    }

    static func strings(_ value: JSONValue, key: String) throws(DecodeError) -> [String] {
        guard let values = value.arrayValue else { throw DecodeError("'\(key)' must be an array of strings") }
        var result: [String] = []
        for element in values {
            guard let text = element.stringValue else { throw DecodeError("'\(key)' must be an array of strings") }
            result.append(text)
        }
        return result
    }
}
