// libFuzzer target: the JSON scanner alone, including decoding every string it accepts.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let buffer = UnsafeRawBufferPointer(start: data, count: size)
    let scanner = JSONScanner(buffer)
    _ = try? scanner.validateDocument()
    try? scanner.forEachMember { key, value in
        _ = scanner.string(key)
        switch value {
        case .string(let ref): _ = scanner.string(ref)
        case .array(let range): scanner.forEachElement(ofArray: range) { if case .string(let ref) = $0 { _ = scanner.string(ref) } }
        case .object(let range): scanner.forEachMember(ofObject: range) { key, _ in _ = scanner.string(key) }
        default: break
        }
    }
    return 0
}
