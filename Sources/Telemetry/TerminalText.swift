/// Text from outside (a BlueZ device's name, which anyone who paired a device chose) made safe
/// to print on a terminal or write to a log.
///
/// A name may hold escape sequences that colour, retitle or clear a terminal, or move its
/// cursor over earlier lines; a log viewer shows them the same way. Control characters (C0,
/// DEL, C1) and the bidirectional overrides that reorder what is shown become visible escapes
/// (`\x1B`, `\u{202E}`): nothing of the text is lost, nothing of it is obeyed.
public enum TerminalText {
    public static func sanitised(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if !isUnsafe(scalar) {
                result.unicodeScalars.append(scalar)
            } else if scalar.value < 0x100 {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result += "\\x" + (hex.count < 2 ? "0" + hex : hex)
            } else {
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
        return result
    }

    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        // Embeddings, overrides and isolates (LRE..RLO, LRI..PDI), and the line and paragraph
        // separators some terminals break lines at.
        case 0x202A...0x202E, 0x2066...0x2069, 0x2028, 0x2029: true
        default: false
        }
    }
}
