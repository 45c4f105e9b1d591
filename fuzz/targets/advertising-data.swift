// libFuzzer target: the AD-structure parser on raw bytes (what Tasmota's `p` decodes to).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let parsed = try? AdvertisingData(parsing: bytes) {
        // Everything reported must lie inside the input.
        precondition(parsed.manufacturerData.reduce(0) { $0 + $1.payload.count + 2 } <= size)
        for manufacturer in parsed.manufacturerData {
            if let status = try? ProximityPairing(manufacturerData: manufacturer) { _ = status.knownModel?.placement(status) }
        }
    }
    return 0
}
