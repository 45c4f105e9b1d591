// libFuzzer target: Google Fast Pair service data (0xFE2C) on raw bytes. Any input either
// decodes or is an unknown layout with a reason; a decoded battery level is a percentage.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    do throws(FastPairAdvertisement.UnknownLayout) {
        let advertisement = try FastPairAdvertisement(serviceData: bytes)
        if let battery = advertisement.battery {
            for level in [battery.leftBattery, battery.rightBattery, battery.caseBattery] {
                if let level { precondition((0...100).contains(level), "Fast Pair level out of range") }
            }
            _ = battery.battery
        }
    } catch {
        precondition(!error.description.isEmpty, "unknown layout without a reason")
    }
    return 0
}
