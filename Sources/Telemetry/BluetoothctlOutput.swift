import AccessoryKit

/// What BlueZ's `bluetoothctl` prints in its non-interactive mode (`bluetoothctl <command>`),
/// read for the addresses in it: a Linux desktop's own controller and the devices connected
/// to it, for `aabridge report-sources`.
///
/// Only lines of the exact shapes below count. bluetoothctl also prints colour codes, its
/// errors ("No default controller available", "Too many arguments") and, while it starts,
/// events about other devices (`[NEW] Device ...`, `[CHG] Device ...`): an event line is not
/// an answer to the command, so a device must never be taken from one.
public enum BluetoothctlOutput {
    /// One `Device` line: the address, and the name after it when there is one.
    public struct Device: Hashable, Sendable {
        public var address: BluetoothAddress
        public var name: String?

        public init(address: BluetoothAddress, name: String?) {
            self.address = address
            self.name = name
        }
    }

    /// `bluetoothctl show` (`Controller 00:1A:7D:DA:71:13 (public)`, then indented properties)
    /// and `bluetoothctl list` (`Controller 00:1A:7D:DA:71:13 desktop [default]`): the
    /// controllers named, in order, each once.
    public static func controllers(_ text: String) -> [BluetoothAddress] {
        var seen: Set<BluetoothAddress> = []
        return lines(text).compactMap { line in
            guard let address = address(after: "Controller ", in: line), seen.insert(address).inserted else { return nil }
            return address
        }
    }

    /// `bluetoothctl devices [Connected]`: one `Device AA:BB:CC:DD:EE:FF Name` line per device,
    /// each once, in order.
    public static func devices(_ text: String) -> [Device] {
        var seen: Set<BluetoothAddress> = []
        return lines(text).compactMap { line in
            guard let address = address(after: "Device ", in: line), seen.insert(address).inserted else { return nil }
            let name = line.dropFirst("Device ".count + 17).trimmingWhitespace
            return Device(address: address, name: name.isEmpty ? nil : String(name))
        }
    }

    /// `bluetoothctl info <address>`: whether it says `Connected: yes` (an indented property
    /// line); nil when it has no `Connected:` line at all (not an answer about a device).
    public static func isConnected(info text: String) -> Bool? {
        for line in lines(text) {
            let property = line.trimmingWhitespace
            guard property.hasPrefix("Connected:") else { continue }
            return property.dropFirst("Connected:".count).trimmingWhitespace == "yes"
        }
        return nil
    }

    /// Whether bluetoothctl refused the argument of `devices Connected`: before BlueZ 5.65,
    /// `devices` took no argument and its shell answers "Too many arguments" (and exits 1).
    public static func refusesDeviceFilter(_ text: String) -> Bool {
        lines(text).contains { $0.trimmingWhitespace.hasPrefix("Too many arguments") }
    }

    /// Whether `bluetoothctl info <address>` said it knows no such device ("Device ... not
    /// available"): a device BlueZ never saw is not connected, which is no failure.
    public static func saysUnknownDevice(_ text: String) -> Bool {
        lines(text).contains { $0.hasPrefix("Device ") && $0.trimmingWhitespace.hasSuffix("not available") }
    }

    /// The text's lines without colour codes and carriage returns. Leading white space is kept:
    /// `Device` and `Controller` answers start a line, property lines are indented.
    public static func lines(_ text: String) -> [Substring] {
        withoutEscapes(text).split(omittingEmptySubsequences: true) { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
    }

    /// The address that follows `prefix` at the very start of `line`, written as bluetoothctl
    /// writes it (17 characters, colons) and followed by the end of the line or a space.
    static func address(after prefix: String, in line: Substring) -> BluetoothAddress? {
        guard line.hasPrefix(prefix) else { return nil }
        let rest = line.dropFirst(prefix.count)
        let text = rest.prefix(17)
        guard text.count == 17, text.allSatisfy({ $0 == ":" || $0.isHexDigit }) else { return nil }
        let after = rest.dropFirst(17).first
        guard after == nil || after == " " || after == "\t" else { return nil }
        return BluetoothAddress(text)
    }

    /// Removes ANSI escape sequences (bluetoothctl colours its errors and events even when its
    /// output is a pipe): `ESC [` parameters and one final letter, or `ESC` and one character.
    /// readline's prompt markers (\u{01}, \u{02}) go too.
    static func withoutEscapes(_ text: String) -> String {
        guard text.contains(where: { $0 == "\u{1B}" || $0 == "\u{01}" || $0 == "\u{02}" }) else { return text }
        var result = ""
        var iterator = text.unicodeScalars.makeIterator()
        while let scalar = iterator.next() {
            switch scalar {
            case "\u{01}", "\u{02}": continue
            case "\u{1B}":
                guard let next = iterator.next() else { return result }
                guard next == "[" else { continue }
                while let parameter = iterator.next() {
                    if ("@"..."~").contains(parameter) { break }
                }
            default:
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
