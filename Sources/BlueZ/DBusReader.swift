import CSystemd

#if canImport(Glibc)
    import Glibc
#endif

/// Reads one sd-bus message through libsystemd's non-variadic calls (`peek_type`,
/// `read_basic`, `enter_container`, `skip`). What BlueZ sends is read only where its shape is
/// the expected one; anything else is skipped, so an unexpected type never misreads a value.
///
/// Cheap on purpose (one runs per advertisement, issue 53): names are compared as C strings
/// where sd-bus holds them (``cString()``, ``is(_:_:)``), no Swift `String` is made of a
/// signature, and what is not read is skipped by sd-bus itself (`sd_bus_message_skip` with no
/// signature: the next complete value, whatever it is).
struct DBusReader {
    let message: OpaquePointer
    let sd: LibSystemd

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

    /// The next value's type; nil at the container's end or on an error. Its contents are not
    /// asked for (sd-bus copies an array's or an entry's signature to give them).
    func peekType() -> CChar? {
        var type: CChar = 0
        guard sd.messagePeekType(message, &type, nil) > 0 else { return nil }
        return type
    }

    /// A string or an object path, as sd-bus holds it in the message: valid while the message
    /// is, never to be kept.
    func cString() -> UnsafePointer<CChar>? {
        guard let type = peekType(), type == Code.string || type == Code.objectPath else { return nil }
        var value: UnsafePointer<CChar>?
        guard withUnsafeMutablePointer(to: &value, { sd.messageReadBasic(message, type, $0) }) > 0 else { return nil }
        return value
    }

    /// A string or an object path.
    func string() -> String? {
        cString().map { String(cString: $0) }
    }

    /// Whether the C string `text` is `name`.
    static func `is`(_ text: UnsafePointer<CChar>, _ name: StaticString) -> Bool {
        withCString(name) { strcmp(text, $0) == 0 }
    }

    /// `text` as a C string: the literal itself (a string literal is stored NUL-terminated),
    /// or a copy where the compiler kept a one-character literal as a scalar.
    static func withCString<Result>(_ text: StaticString, _ body: (UnsafePointer<CChar>) -> Result) -> Result {
        guard text.hasPointerRepresentation else { return text.description.withCString(body) }
        return UnsafeRawPointer(text.utf8Start).withMemoryRebound(to: CChar.self, capacity: text.utf8CodeUnitCount + 1, body)
    }

    /// A fixed-size basic value of `code`.
    func basic<Value: FixedWidthInteger>(_ code: CChar, as type: Value.Type) -> Value? {
        guard peekType() == code else { return nil }
        var value: Value = 0
        guard withUnsafeMutablePointer(to: &value, { sd.messageReadBasic(message, code, $0) }) > 0 else { return nil }
        return value
    }

    /// An `ay`, at most `limit` bytes (a longer one is skipped: no advertisement holds more).
    /// sd-bus reads nothing but an `ay` here and leaves anything else where it is.
    func bytes(limit: Int = 255) -> [UInt8]? {
        var pointer: UnsafeRawPointer?
        var size = 0
        guard sd.messageReadArray(message, Code.byte, &pointer, &size) > 0 else { return nil }
        guard size <= limit else { return nil }
        guard let pointer, size > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: size))
    }

    /// Enters a container of `type` with `contents`; false at the end or when it is not one.
    func enter(_ type: CChar, _ contents: StaticString) -> Bool {
        Self.withCString(contents) { sd.messageEnterContainer(message, type, $0) > 0 }
    }

    /// Leaves the container entered last, skipping what is left of it (sd-bus refuses to
    /// leave a variant or a dictionary entry that was not read to its end): at most 64 values,
    /// each skipped whole by sd-bus.
    func exit() {
        var left = 64
        while left > 0, sd.messageSkip(message, nil) > 0 { left -= 1 }
        _ = sd.messageExitContainer(message)
    }

    /// Skips the next complete value, whatever it is (nothing at the container's end).
    func skip() {
        _ = sd.messageSkip(message, nil)
    }

    /// A variant's value read by `read` when it holds `contents`; skipped (nil) otherwise.
    func variant<Value>(_ contents: StaticString, _ read: () -> Value?) -> Value? {
        guard enter(Code.variant, contents) else {
            // Another type, or not a variant: skipped whole (nothing at the container's end).
            skip()
            return nil
        }
        let value = read()
        exit()
        return value
    }
}
