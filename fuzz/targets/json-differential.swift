import Foundation

// libFuzzer target: differential check of the JSON scanner against Foundation. Whatever the
// scanner accepts as an object must also be valid JSON for JSONSerialization (the scanner may be
// stricter: it limits nesting depth), and it must report the same member count
// when no key is repeated.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let buffer = UnsafeRawBufferPointer(start: data, count: size)
    let scanner = JSONScanner(buffer)
    var keys: [String] = []
    guard (try? scanner.forEachMember({ key, _ in keys.append(scanner.string(key)) })) != nil else { return 0 }
    guard let object = try? JSONSerialization.jsonObject(with: Data(buffer), options: [.fragmentsAllowed]) as? [String: Any] else {
        preconditionFailure("scanner accepted what JSONSerialization rejects")
    }
    if Set(keys).count == keys.count { precondition(object.count == keys.count, "member count differs") }
    return 0
}
