import Foundation
import Testing

@testable import Telemetry

/// The one bounded reader every command and the configuration use (issue 49, finding 8).
@Suite("BoundedFile: the size before reading, special files by type")
struct BoundedFileTests {
    final class Directory {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("aabridge-bounded-\(UUID().uuidString)").path
        init() throws { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    @Test("a sparse 8 GiB file is refused by its size at once, nothing read")
    func sparseLarge() throws {
        let directory = try Directory()
        let file = directory.path + "/large"
        #expect(FileManager.default.createFile(atPath: file, contents: nil))
        #expect(truncate(file, off_t(8) << 30) == 0)
        let start = ContinuousClock.now
        #expect(BoundedFile.read(file, limit: 1024) == .failure(.tooLarge(size: 8 << 30, limit: 1024)))
        #expect(ContinuousClock.now - start < .seconds(1))
    }

    @Test("exactly the limit is read; one byte more is refused")
    func limit() throws {
        let directory = try Directory()
        let file = directory.path + "/f"
        #expect(FileManager.default.createFile(atPath: file, contents: Data(repeating: 0x41, count: 100)))
        #expect(BoundedFile.read(file, limit: 100) == .success(Array(repeating: 0x41, count: 100)))
        #expect(BoundedFile.read(file, limit: 99) == .failure(.tooLarge(size: 100, limit: 99)))
    }

    @Test("devices, FIFOs, sockets and directories are refused by their type; a missing file is missing")
    func specialFiles() throws {
        let directory = try Directory()
        #expect(BoundedFile.read("/dev/zero", limit: 1024) == .failure(.notRegular(kind: "a character device")))
        #expect("\(BoundedFile.Problem.notRegular(kind: "a character device"))" == "it is a character device, not a regular file")
        let fifo = directory.path + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(BoundedFile.read(fifo, limit: 1024) == .failure(.notRegular(kind: "a FIFO")))
        #expect(BoundedFile.read(directory.path, limit: 1024) == .failure(.notRegular(kind: "a directory")))
        // A socket's inode made with mknod: the type BoundedFile looks at, without opening a socket
        // (the unit layer opens none; docs/testing.md).
        let socketPath = directory.path + "/socket"
        #expect(mknod(socketPath, S_IFSOCK | 0o600, 0) == 0)
        #expect(BoundedFile.read(socketPath, limit: 1024) == .failure(.notRegular(kind: "a socket")))
        #expect(BoundedFile.read(directory.path + "/none", limit: 1024) == .failure(.missing))
    }
}
