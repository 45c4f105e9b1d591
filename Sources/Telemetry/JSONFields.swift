import AccessoryKit

/// Typed access to scanned JSON values, turning a wrong type into a precise rejection.
struct JSONFields {
    let scanner: JSONScanner

    /// Scans the payload as one object, calling `body` per member, and maps syntax errors.
    static func scanObject(
        _ payload: UnsafeRawBufferPointer, _ body: (JSONScanner, JSONScanner.StringRef, JSONScanner.Value) -> Void
    ) throws(TelemetryRejection) -> JSONFields {
        let scanner = JSONScanner(payload)
        do {
            try scanner.forEachMember { key, value in body(scanner, key, value) }
        } catch {
            // A document that is valid JSON as a whole failed only for not being an object.
            if (try? scanner.validateDocument()) != nil {
                throw TelemetryRejection(.wrongType, "payload is JSON but not an object")
            }
            throw TelemetryRejection(.invalidJSON, "invalid JSON at byte \(error.offset): \(error.message)")
        }
        return JSONFields(scanner: scanner)
    }

    func wrongType(_ field: String, _ value: JSONScanner.Value, expected: String) -> TelemetryRejection {
        TelemetryRejection(.wrongType, "'\(field)' must be \(expected), not \(value.typeName)", field: field)
    }

    func string(_ value: JSONScanner.Value?, _ field: String) throws(TelemetryRejection) -> String? {
        guard let value else { return nil }
        guard case .string(let ref) = value else { throw wrongType(field, value, expected: "a string") }
        return scanner.string(ref)
    }

    func bool(_ value: JSONScanner.Value?, _ field: String) throws(TelemetryRejection) -> Bool? {
        guard let value else { return nil }
        guard case .bool(let flag) = value else { throw wrongType(field, value, expected: "true or false") }
        return flag
    }

    func number(_ value: JSONScanner.Value?, _ field: String) throws(TelemetryRejection) -> Double? {
        guard let value else { return nil }
        guard case .number(let number) = value else { throw wrongType(field, value, expected: "a number") }
        return number
    }

    /// A power in dBm, rounded to the nearest integer and checked against ``TelemetryLimits/rssiRange``.
    func dBm(_ value: JSONScanner.Value?, _ field: String) throws(TelemetryRejection) -> Int? {
        guard let number = try number(value, field) else { return nil }
        let range = TelemetryLimits.rssiRange
        guard number.isFinite, number > Double(range.lowerBound) - 0.5, number < Double(range.upperBound) + 0.5 else {
            throw TelemetryRejection(
                .rssiOutOfRange, "'\(field)' \(number) dBm is outside \(range.lowerBound)...\(range.upperBound)", field: field)
        }
        // Half away from zero, as `rounded()` would, without depending on libm (not linked by every product).
        return Int(number < 0 ? number - 0.5 : number + 0.5)
    }

    /// Hex bytes from a string value, no escapes expected.
    func hex(_ value: JSONScanner.Value?, _ field: String) throws(TelemetryRejection) -> [UInt8]? {
        guard let value else { return nil }
        guard case .string(let ref) = value else { throw wrongType(field, value, expected: "a hex string") }
        let decoded = ref.hasEscapes ? scanner.decodedBytes(ref).withUnsafeBytes { Hex.decode($0) } : Hex.decode(scanner.rawBytes(ref))
        guard let decoded else {
            let length = ref.end - ref.start
            let reason = length % 2 == 1 ? "odd number of hex digits (\(length))" : "a character that is not a hex digit"
            throw TelemetryRejection(.invalidHex, "'\(field)' is not hex: \(reason)", field: field)
        }
        return decoded
    }

    /// A Bluetooth address from a string value.
    func address(_ value: JSONScanner.Value?, _ field: String) throws(TelemetryRejection) -> BluetoothAddress? {
        guard let value else { return nil }
        guard case .string(let ref) = value else { throw wrongType(field, value, expected: "an address string") }
        let address: BluetoothAddress? =
            ref.hasEscapes
            ? scanner.decodedBytes(ref).withUnsafeBytes { BluetoothAddress.parse($0) }
            : BluetoothAddress.parse(scanner.rawBytes(ref))
        guard let address else {
            throw TelemetryRejection(
                .invalidAddress, "'\(field)' is not a Bluetooth address: \(Self.excerpt(scanner.string(ref)))", field: field)
        }
        return address
    }

    /// A short, printable excerpt of untrusted text for a log message.
    static func excerpt(_ text: String) -> String {
        let printable = text.unicodeScalars.map { $0.value >= 0x20 && $0.value != 0x7F ? String($0) : "?" }.joined()
        return printable.count > 40 ? "\"\(printable.prefix(40))...\"" : "\"\(printable)\""
    }
}
