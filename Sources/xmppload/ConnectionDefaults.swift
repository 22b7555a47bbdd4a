import ArgumentParser
import Foundation

/// Connection details from the environment (`XMPPLOAD_HOST`, `XMPPLOAD_PORT`, `XMPPLOAD_DOMAIN`,
/// `XMPPLOAD_PASSWORD`, `XMPPLOAD_ACCOUNTS`), optionally read from a `KEY=value` file such as the
/// `server.env` that `scripts/local-server up` writes. Flags given on the command line win.
struct ConnectionDefaults {
    var server: String?
    var domain: String?
    var password: String?
    var accounts: String?

    static func load(file: String?) throws -> ConnectionDefaults {
        var values = ProcessInfo.processInfo.environment
        if let file {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw ValidationError("--server-env: cannot read '\(file)'")
            }
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { continue }
                values[String(parts[0]).trimmingCharacters(in: .whitespaces)] = String(parts[1]).trimmingCharacters(in: .whitespaces)
            }
        }
        var defaults = ConnectionDefaults()
        if let host = values["XMPPLOAD_HOST"], let port = values["XMPPLOAD_PORT"] { defaults.server = "\(host):\(port)" }
        defaults.domain = values["XMPPLOAD_DOMAIN"]
        defaults.password = values["XMPPLOAD_PASSWORD"]
        if let count = values["XMPPLOAD_ACCOUNTS"].flatMap(Int.init), count > 0 { defaults.accounts = "1-\(count)" }
        return defaults
    }
}
