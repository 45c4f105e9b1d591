import CSystemd

/// Reads one sd-bus message through libsystemd's non-variadic calls (`peek_type`,
/// `read_basic`, `enter_container`, `skip`). What BlueZ sends is read only where its shape is
/// the expected one; anything else is skipped, so an unexpected type never misreads a value.
struct DBusReader {
    let message: OpaquePointer

    /// D-Bus's type codes, as sd-bus takes them.
    enum Code {
        static let byte = CChar(UInt8(ascii: "y"))
        static let boolean = CChar(UInt8(ascii: "b"))
        static let int16 = CChar(UInt8(ascii: "n"))
        static let uint16 = CChar(UInt8(ascii: "q"))
        static let string = CChar(UInt8(ascii: "s"))
        static let objectPath = CChar(UInt8(ascii: "o"))
        static let array = CChar(UInt8(ascii: "a"))
        static let variant = CChar(UInt8(ascii: "v"))
        static let dictEntry = CChar(UInt8(ascii: "e"))
    }

    /// The next value's type and, for a container, its contents; nil at the container's end
    /// or on an error.
    func peek() -> (type: CChar, contents: String?)? {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        guard sd_bus_message_peek_type(message, &type, &contents) > 0 else { return nil }
        return (type, contents.map { String(cString: $0) })
    }

    /// A string or an object path.
    func string() -> String? {
        guard let next = peek(), next.type == Code.string || next.type == Code.objectPath else { return nil }
        var value: UnsafePointer<CChar>?
        guard withUnsafeMutablePointer(to: &value, { sd_bus_message_read_basic(message, next.type, $0) }) > 0, let value else { return nil }
        return String(cString: value)
    }

    /// A fixed-size basic value of `code`.
    func basic<Value: FixedWidthInteger>(_ code: CChar, as type: Value.Type) -> Value? {
        guard peek()?.type == code else { return nil }
        var value: Value = 0
        guard withUnsafeMutablePointer(to: &value, { sd_bus_message_read_basic(message, code, $0) }) > 0 else { return nil }
        return value
    }

    /// An `ay`, at most `limit` bytes (a longer one is skipped: no advertisement holds more).
    func bytes(limit: Int = 255) -> [UInt8]? {
        guard let next = peek(), next.type == Code.array, next.contents == "y" else { return nil }
        var pointer: UnsafeRawPointer?
        var size = 0
        guard sd_bus_message_read_array(message, Code.byte, &pointer, &size) >= 0 else { return nil }
        guard size <= limit else { return nil }
        guard let pointer, size > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: size))
    }

    /// Enters a container of `type` with `contents`; false at the end or when it is not one.
    func enter(_ type: CChar, _ contents: String) -> Bool {
        sd_bus_message_enter_container(message, type, contents) > 0
    }

    /// Leaves the container entered last, skipping what is left of it (sd-bus refuses to
    /// leave a variant or a dictionary entry that was not read to its end).
    func exit() {
        var left = 64
        while left > 0, peek() != nil {
            skip()
            left -= 1
        }
        _ = sd_bus_message_exit_container(message)
    }

    /// Skips the next complete value, whatever it is.
    func skip() {
        guard let next = peek() else { return }
        let signature: String
        switch next.type {
        case Code.array: signature = "a" + (next.contents ?? "")
        case Code.variant: signature = "v"
        case Code.dictEntry: signature = "{" + (next.contents ?? "") + "}"
        default:
            if let contents = next.contents, next.type == CChar(UInt8(ascii: "r")) {
                signature = "(" + contents + ")"
            } else {
                signature = String(UnicodeScalar(UInt8(bitPattern: next.type)))
            }
        }
        _ = sd_bus_message_skip(message, signature)
    }

    /// A variant's value read by `read` when it holds `contents`; skipped (nil) otherwise.
    func variant<Value>(_ contents: String, _ read: () -> Value?) -> Value? {
        guard let next = peek(), next.type == Code.variant else { return nil }
        guard next.contents == contents, enter(Code.variant, contents) else {
            skip()
            return nil
        }
        let value = read()
        exit()
        return value
    }
}
