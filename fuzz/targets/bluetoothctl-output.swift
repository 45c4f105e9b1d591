// libFuzzer target: what `aabridge report-sources` reads from bluetoothctl (show, devices,
// info), on arbitrary text, including invalid UTF-8 and terminal escapes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let controllers = BluetoothctlOutput.controllers(text)
    let devices = BluetoothctlOutput.devices(text)
    // Every address reported was a line of the input: never more than the lines.
    let lines = BluetoothctlOutput.lines(text).count
    precondition(controllers.count <= lines && devices.count <= lines, "more results than lines")
    _ = BluetoothctlOutput.isConnected(info: text)
    _ = BluetoothctlOutput.refusesDeviceFilter(text)
    _ = BluetoothctlOutput.saysUnknownDevice(text)
    return 0
}
