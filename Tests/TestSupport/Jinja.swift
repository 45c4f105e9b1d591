import Foundation
import LocalProcess

/// Jinja2, the engine of Home Assistant's templates, for the tests that render the bridge's
/// templates as Home Assistant would (through `python3` on PATH: pip's Jinja2 or Debian's
/// python3-jinja2, which scripts/install-deps installs).
public enum Jinja {
    /// Whether those tests run: when `python3` can import `jinja2.sandbox`, and always in CI
    /// (`CI=true`), where a missing Jinja2 must fail the tests rather than skip them.
    public static let testsEnabled: Bool = available || ProcessInfo.processInfo.environment["CI"] == "true"

    /// Whether `python3` on PATH has Jinja2's sandbox.
    public static let available: Bool = {
        guard let child = try? ChildProcess(path: "/usr/bin/env", arguments: ["python3", "-c", "import jinja2.sandbox"]) else {
            return false
        }
        return child.wait() == 0
    }()
}
