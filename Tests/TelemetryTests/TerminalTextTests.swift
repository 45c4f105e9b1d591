import Testing

@testable import Telemetry

/// Names from outside, printed (issue 49, finding 9).
@Suite("TerminalText: escapes made visible, never obeyed")
struct TerminalTextTests {
    @Test("control characters, C1 and bidi overrides become visible escapes; ordinary text is unchanged")
    func sanitised() {
        #expect(TerminalText.sanitised("Alice’s AirPods Pro") == "Alice’s AirPods Pro")
        #expect(TerminalText.sanitised("a\u{1B}[2Jb") == #"a\x1B[2Jb"#)
        #expect(TerminalText.sanitised("\u{1B}]0;title\u{07}") == #"\x1B]0;title\x07"#)
        #expect(TerminalText.sanitised("x\u{9B}1A\u{7F}\r\n\t") == #"x\x9B1A\x7F\x0D\x0A\x09"#)
        #expect(TerminalText.sanitised("\u{202E}fdp.exe") == #"\u{202E}fdp.exe"#)
        #expect(TerminalText.sanitised("\u{0}") == #"\x00"#)
    }
}
