import AccessoryKit
import CPostgres

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value bound to a statement parameter, or read back.
public enum PostgresValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case text(String)
    case bytes([UInt8])
    case bool(Bool)
}

/// A `NOTIFY` another session sent to a channel this one listens on.
public struct PostgresNotification: Sendable, Hashable {
    public let channel: String
    public let payload: String
    /// The sending server process (`pg_backend_pid()` of the notifier).
    public let processID: Int32

    public init(channel: String, payload: String, processID: Int32) {
        self.channel = channel
        self.payload = payload
        self.processID = processID
    }
}

/// One libpq connection: the thin C-facing layer under ``PostgresStore`` and the cluster's
/// membership.
///
/// Not `Sendable` and not locked: libpq connections must not be used from two threads at
/// once, so the owner keeps it under a `Mutex` or on one thread.
///
/// Parameters and results travel in PostgreSQL's text format (integers as decimal, `bytea` as
/// `\x` hex, booleans as `t`/`f`), with each value's length, so any `bytea` and any Unicode
/// text round-trip exactly. The password is given to libpq as its own keyword and never
/// appears in ``location`` or in an error message.
public final class PostgresConnection {
    /// The connection string without its password, for log lines and errors.
    public let location: String
    private var handle: OpaquePointer?
    /// libpq, opened on first use (``LibPQ``).
    private let pq: LibPQ
    /// A failure said the session is gone (SQLSTATE class 08, the server shutting down) while
    /// libpq may still call the connection OK: ``isConnected`` is false until ``reconnect()``.
    private var lost = false

    /// Connects and runs the session setup (``sessionSetup``).
    ///
    /// - Parameters:
    ///   - url: a libpq connection string, `postgresql://user@host:port/db` or `host=... dbname=...`.
    ///   - password: overrides a password in `url`; nil uses the URL's, `PGPASSWORD` or `~/.pgpass`.
    ///   - applicationName: shown in `pg_stat_activity` unless the URL sets one.
    /// - Throws: `.cannotOpen` for a malformed URL, a refused login, a missing database or a
    ///   libpq that cannot be loaded; `.unavailable` when the server cannot be reached.
    public init(url: String, password: String? = nil, applicationName: String = "aabridge") throws(StorageError) {
        pq = try LibPQ.shared()
        location = Self.redacted(url)
        if let problem = Self.syntaxProblem(url) {
            throw StorageError(
                .cannotOpen, message: "storage.url \(location) is not a valid PostgreSQL connection string: \(problem)")
        }
        // Later keywords override earlier ones, and the expanded URL overrides what comes
        // before it: the defaults go first, the explicit password last.
        var keywords = ["connect_timeout", "application_name", "client_encoding", "dbname"]
        var values = ["5", applicationName, "UTF8", url]
        if let password {
            keywords.append("password")
            values.append(password)
        }
        let keywordPointers = keywords.map { strdup($0) } + [nil]
        let valuePointers = values.map { strdup($0) } + [nil]
        defer {
            keywordPointers.forEach { free($0) }
            valuePointers.forEach { free($0) }
        }
        let connection = keywordPointers.withUnsafeBufferPointer { keywordBuffer in
            valuePointers.withUnsafeBufferPointer { valueBuffer in
                keywordBuffer.withMemoryRebound(to: UnsafePointer<CChar>?.self) { keywordsC in
                    valueBuffer.withMemoryRebound(to: UnsafePointer<CChar>?.self) { valuesC in
                        pq.connectdbParams(keywordsC.baseAddress, valuesC.baseAddress, 1)
                    }
                }
            }
        }
        handle = connection
        guard let connection, pq.status(connection) == CONNECTION_OK else {
            let error = connectionError(context: "cannot connect to PostgreSQL")
            close()
            throw error
        }
        // Notices (an IF NOT EXISTS that skipped, a ROLLBACK with nothing to undo) are not
        // errors; libpq would print each on stderr, past the bridge's log.
        _ = pq.setNoticeProcessor(connection, { _, _ in }, nil)
        do throws(StorageError) {
            try execute(Self.sessionSetup)
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// Run after every (re)connect. `synchronous_commit = on`: a commit returns only once its
    /// WAL record is flushed to disk, which "a request is committed before it is answered"
    /// needs (a server or role default of `off` or `local` would acknowledge too early).
    static let sessionSetup = "SET synchronous_commit = on; SET bytea_output = 'hex'; SET client_encoding = 'UTF8'"

    /// Whether the connection is up (`PQstatus` is `CONNECTION_OK`). A server that went away
    /// is noticed by the next operation, which fails with `.unavailable`; after that this is false.
    public var isConnected: Bool {
        guard let handle, !lost else { return false }
        return pq.status(handle) == CONNECTION_OK
    }

    /// Reconnects with the same parameters (`PQreset`) and runs the session setup again.
    /// What the caller set up on the session (`LISTEN`s) is its own to repeat.
    ///
    /// - Throws: `.unavailable` when the server still cannot be reached, `.closed` after ``close()``.
    public func reconnect() throws(StorageError) {
        guard let handle else { throw closedError() }
        pq.reset(handle)
        lost = false
        guard pq.status(handle) == CONNECTION_OK else { throw connectionError(context: "cannot reconnect to PostgreSQL") }
        try execute(Self.sessionSetup)
    }

    /// The value libpq uses for a connection option (`PQconninfo`), e.g. `connect_timeout`.
    func option(_ keyword: String) -> String? {
        guard let handle, let options = pq.conninfo(handle) else { return nil }
        defer { pq.conninfoFree(options) }
        var option = options
        while let name = option.pointee.keyword {
            if String(cString: name) == keyword { return option.pointee.val.map { String(cString: $0) } }
            option += 1
        }
        return nil
    }

    /// Whether a transaction is open on the session (also one a failed statement aborted,
    /// which only `ROLLBACK` ends).
    var inTransaction: Bool {
        guard let handle else { return false }
        let status = pq.transactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    /// Runs SQL that may hold several statements and binds nothing (schema, `BEGIN`, `LISTEN`).
    public func execute(_ sql: String) throws(StorageError) {
        guard let handle else { throw closedError() }
        let result = pq.exec(handle, sql)
        defer { pq.clear(result) }
        try check(result, context: "statement failed")
    }

    /// Runs one statement with `parameters` (`$1`, `$2`, ...), calling `row` for each result row.
    public func run(
        _ sql: String, _ parameters: [PostgresValue] = [],
        row: (PostgresRow) throws(StorageError) -> Void = { _ throws(StorageError) in }
    ) throws(StorageError) {
        guard let handle else { throw closedError() }
        var lengths: [Int32] = []
        let texts: [UnsafeMutablePointer<CChar>?] = parameters.map { value in
            let text: String? =
                switch value {
                case .null: nil
                case .integer(let number): String(number)
                case .text(let string): string
                // bytea in its hex input form.
                case .bytes(let bytes): "\\x" + Hex.encode(bytes)
                case .bool(let flag): flag ? "t" : "f"
                }
            lengths.append(Int32(text?.utf8.count ?? 0))
            return text.map { strdup($0) } ?? nil
        }
        defer { texts.forEach { free($0) } }
        let result = texts.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: UnsafePointer<CChar>?.self) { values in
                lengths.withUnsafeBufferPointer { lengthBuffer in
                    pq.execParams(handle, sql, Int32(parameters.count), nil, values.baseAddress, lengthBuffer.baseAddress, nil, 0)
                }
            }
        }
        defer { pq.clear(result) }
        try check(result, context: "statement failed")
        guard let result else { return }
        for index in 0..<pq.ntuples(result) {
            try row(PostgresRow(pq: pq, result: result, row: index))
        }
    }

    /// The notifications that arrived for this session's `LISTEN`s, oldest first; reads what
    /// the socket holds (`PQconsumeInput`) and never blocks. Wait for the socket to be
    /// readable (``socket``, `poll`) to sleep until one comes.
    ///
    /// - Throws: `.unavailable` when the connection was lost.
    public func notifications() throws(StorageError) -> [PostgresNotification] {
        guard let handle else { throw closedError() }
        guard pq.consumeInput(handle) == 1 else {
            lost = true
            throw connectionError(context: "cannot read notifications")
        }
        var received: [PostgresNotification] = []
        while let notification = pq.notifies(handle) {
            received.append(
                PostgresNotification(
                    channel: String(cString: notification.pointee.relname), payload: String(cString: notification.pointee.extra),
                    processID: notification.pointee.be_pid))
            pq.freemem(notification)
        }
        return received
    }

    /// The connection's socket (`PQsocket`), to `poll` for notifications; -1 when closed.
    public var socket: Int32 {
        guard let handle else { return -1 }
        return pq.socket(handle)
    }

    /// Closes the connection (`PQfinish`); later calls fail with `.closed`. Idempotent.
    public func close() {
        if let handle { pq.finish(handle) }
        handle = nil
    }

    // MARK: Errors

    /// Throws the error a failed result stands for.
    private func check(_ result: OpaquePointer?, context: String) throws(StorageError) {
        let status = result.map { pq.resultStatus($0) } ?? PGRES_FATAL_ERROR
        switch status {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY: return
        default: break
        }
        let sqlState = result.flatMap { pq.resultErrorField($0, Int32(UInt8(ascii: "C"))) }.map { String(cString: $0) }
        let primary = result.flatMap { pq.resultErrorField($0, Int32(UInt8(ascii: "M"))) }.map { String(cString: $0) }
        // A lost connection has no SQLSTATE of its own; libpq marks the connection bad.
        if !isConnected || sqlState.map(Self.isConnectionFailure) == true {
            lost = true
            throw connectionError(context: "the connection to PostgreSQL was lost", sqlState: sqlState)
        }
        let text = primary ?? trimmedErrorMessage()
        let code = Self.code(forSQLState: sqlState)
        var message = "\(context): \(text) (SQLSTATE \(sqlState ?? "none"), database \(location))"
        let advice = Self.advice(for: code)
        if !advice.isEmpty { message += "; \(advice)" }
        throw StorageError(code, message: message, sqlState: sqlState)
    }

    /// The error for a failed connect or a lost connection, with libpq's explanation.
    private func connectionError(context: String, sqlState: String? = nil) -> StorageError {
        let text = trimmedErrorMessage()
        let refused = ["authentication failed", "no password supplied", "does not exist", "not permitted", "pg_hba.conf"]
            .contains { text.contains($0) }
        let code: StorageError.Code = refused ? .cannotOpen : .unavailable
        let advice =
            refused
            ? "check storage.url's user and database and storage.password (or password_file)"
            : StorageError.advice(for: .unavailable)
        return StorageError(code, message: "\(context) at \(location): \(text); \(advice)", sqlState: sqlState)
    }

    private func trimmedErrorMessage() -> String {
        guard let handle, let pointer = pq.errorMessage(handle) else { return "no connection" }
        var text = String(cString: pointer)
        while text.last?.isWhitespace == true { text.removeLast() }
        text = text.replacing("\n", with: " ")
        return text.isEmpty ? "no connection" : text
    }

    /// SQLSTATEs that say the session is gone: class 08 (connection exception) and the
    /// server shutting down (57P01-57P03).
    static func isConnectionFailure(_ sqlState: String) -> Bool {
        sqlState.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(sqlState)
    }

    /// The code for a SQLSTATE (PostgreSQL's appendix A).
    static func code(forSQLState sqlState: String?) -> StorageError.Code {
        guard let sqlState else { return .other(0) }
        switch sqlState {
        case "53100": return .diskFull
        case "25006": return .readOnly
        case "40001", "40P01", "55P03", "57014": return .busy
        case "XX001", "XX002": return .corrupt
        case "58030": return .ioError
        default: break
        }
        if sqlState.hasPrefix("23") { return .constraint }
        if sqlState.hasPrefix("28") || sqlState == "3D000" { return .cannotOpen }
        return .other(0)
    }

    static func advice(for code: StorageError.Code) -> String {
        switch code {
        case .diskFull: "the database server's disk is full; free space, then retry (nothing was stored)"
        case .readOnly: "the database is read-only (a standby, or default_transaction_read_only); point storage.url at the primary"
        case .busy: "the database was busy (a lock or serialization conflict); retry"
        default: StorageError.advice(for: code)
        }
    }

    private func closedError() -> StorageError {
        StorageError(.closed, message: "the connection to \(location) is closed")
    }

    // MARK: Connection strings

    /// Why libpq cannot parse `url` (`PQconninfoParse`), or nil when it can; what stops libpq
    /// from loading when it cannot (``LibPQ``).
    public static func syntaxProblem(_ url: String) -> String? {
        let pq: LibPQ
        do { pq = try LibPQ.shared() } catch { return error.message }
        var errorMessage: UnsafeMutablePointer<CChar>?
        guard let options = pq.conninfoParse(url, &errorMessage) else {
            defer { if let errorMessage { pq.freemem(errorMessage) } }
            var text = errorMessage.map { String(cString: $0) } ?? "cannot parse it"
            while text.last?.isWhitespace == true { text.removeLast() }
            return text
        }
        pq.conninfoFree(options)
        return nil
    }

    /// Whether `url` carries a password itself (`user:password@` or `password=`).
    public static func hasInlinePassword(_ url: String) -> Bool {
        guard let pq = try? LibPQ.shared() else { return false }
        guard let options = pq.conninfoParse(url, nil) else { return false }
        defer { pq.conninfoFree(options) }
        var option = options
        while let keyword = option.pointee.keyword {
            if String(cString: keyword) == "password", let value = option.pointee.val, value.pointee != 0 { return true }
            option += 1
        }
        return false
    }

    /// `url` without its secrets: for log lines, `bridge/info` and error messages.
    ///
    /// Rebuilt from libpq's own parse (`PQconninfoParse`), not from the text as written: libpq
    /// percent-decodes a URI's parameter names as well as its values (`?pass%77ord=` is a
    /// password to it), so only its parse knows which option is which. Every option libpq
    /// marks secret (its `dispchar` is `*`: `password`, `sslpassword`, …) is left out, and so
    /// is `password` itself whatever libpq says. A URI comes back as a URI
    /// (`postgresql://user@host:port/dbname?option=value`, options in libpq's order), a
    /// `key=value` string as `key=value` pairs. A string libpq cannot parse is not shown at all,
    /// nor any string while libpq cannot be loaded.
    public static func redacted(_ url: String) -> String {
        guard let pq = try? LibPQ.shared() else { return unparseable }
        var errorMessage: UnsafeMutablePointer<CChar>?
        guard let options = pq.conninfoParse(url, &errorMessage) else {
            if let errorMessage { pq.freemem(errorMessage) }
            return unparseable
        }
        defer { pq.conninfoFree(options) }
        var shown: [(keyword: String, value: String)] = []
        var option = options
        while let keyword = option.pointee.keyword {
            defer { option += 1 }
            guard let value = option.pointee.val else { continue }
            let name = String(cString: keyword)
            let secret = option.pointee.dispchar.map { String(cString: $0) == "*" } ?? false
            if secret || name == "password" { continue }
            shown.append((name, String(cString: value)))
        }
        for scheme in ["postgresql://", "postgres://"] where url.hasPrefix(scheme) {
            return uri(scheme: scheme, shown)
        }
        return shown.map { "\($0.keyword)=\(quotedValue($0.value))" }.joined(separator: " ")
    }

    /// What ``redacted(_:)`` shows for a string libpq cannot parse (its parts are unknown,
    /// so any of them could be a password).
    public static let unparseable = "<a connection string libpq cannot parse; not shown>"

    private static func uri(scheme: String, _ options: [(keyword: String, value: String)]) -> String {
        var rest = options
        func take(_ keyword: String) -> String? {
            guard let index = rest.firstIndex(where: { $0.keyword == keyword }) else { return nil }
            return rest.remove(at: index).value
        }
        let user = take("user")
        let dbname = take("dbname")
        var hosts = (take("host") ?? "").split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let ports = (take("port") ?? "").split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        // A socket directory cannot be a URI's host: it goes to the query, as libpq accepts it.
        var query: [(keyword: String, value: String)] = []
        if hosts.contains(where: { $0.hasPrefix("/") || $0.hasPrefix("@") }) {
            query.append(("host", hosts.joined(separator: ",")))
            hosts = []
        }
        var authority = user.map { percentEncoded($0) + "@" } ?? ""
        if hosts.isEmpty, !ports.isEmpty, ports != [""] {
            query.append(("port", ports.joined(separator: ",")))
        } else {
            let count = max(hosts.count, ports.count)
            authority += (0..<count).map { index in
                var host = index < hosts.count ? hosts[index] : ""
                if host.contains(":") { host = "[" + host + "]" } else { host = percentEncoded(host) }
                let port = ports.count == 1 ? ports[0] : (index < ports.count ? ports[index] : "")
                return port.isEmpty ? host : host + ":" + port
            }.joined(separator: ",")
        }
        query += rest
        var text = scheme + authority
        if let dbname { text += "/" + percentEncoded(dbname) }
        if !query.isEmpty {
            text += "?" + query.map { percentEncoded($0.keyword) + "=" + percentEncoded($0.value) }.joined(separator: "&")
        }
        return text
    }

    /// RFC 3986's unreserved characters as they are, everything else `%XX`.
    private static func percentEncoded(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.append(Character(Unicode.Scalar(byte)))
            default:
                encoded += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0x0F, radix: 16, uppercase: true)
            }
        }
        return encoded
    }

    /// A `key=value` value, single-quoted (with `\'` and `\\`) when it is empty or holds a
    /// space, a quote or a backslash, as libpq's keyword syntax asks.
    private static func quotedValue(_ value: String) -> String {
        guard value.isEmpty || value.contains(where: { $0.isWhitespace || $0 == "'" || $0 == "\\" }) else { return value }
        var quoted = "'"
        for character in value {
            if character == "'" || character == "\\" { quoted.append("\\") }
            quoted.append(character)
        }
        return quoted + "'"
    }
}

/// One row of a result; valid only inside the `run` callback.
public struct PostgresRow {
    let pq: LibPQ
    let result: OpaquePointer
    let row: Int32

    public func isNull(_ column: Int32) -> Bool { pq.getisnull(result, row, column) == 1 }

    /// The column as an integer; 0 for NULL or text that is not one.
    public func integer(_ column: Int32) -> Int64 { optionalInteger(column) ?? 0 }

    public func optionalInteger(_ column: Int32) -> Int64? {
        guard let text = text(column) else { return nil }
        return Int64(text)
    }

    /// The column as text, exactly as stored (by length, not up to a NUL); nil for NULL.
    public func text(_ column: Int32) -> String? {
        guard !isNull(column), let pointer = pq.getvalue(result, row, column) else { return nil }
        let count = Int(pq.getlength(result, row, column))
        return pointer.withMemoryRebound(to: UInt8.self, capacity: count) { bytes in
            String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
        }
    }

    /// A `bytea` column (hex output) as bytes; nil for NULL or a value that is not hex.
    public func bytes(_ column: Int32) -> [UInt8]? {
        guard !isNull(column), let pointer = pq.getvalue(result, row, column) else { return nil }
        let count = Int(pq.getlength(result, row, column))
        // bytea's hex output form (the session sets bytea_output = 'hex'): `\x` and the digits.
        let text = UnsafeRawBufferPointer(start: pointer, count: count)
        guard count >= 2, text[0] == UInt8(ascii: "\\"), text[1] == UInt8(ascii: "x") else { return nil }
        return Hex.decode(UnsafeRawBufferPointer(rebasing: text[2...]))
    }

    /// A `boolean` column; false for NULL.
    public func bool(_ column: Int32) -> Bool { text(column) == "t" }
}
