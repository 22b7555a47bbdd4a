/// Removes secrets from a command line before it is stored (manifest.json) or shown.
///
/// Pure: `redact(_:)` replaces the value of every secret-bearing option with `<redacted>`, whether
/// written `--password VALUE` or `--password=VALUE`. File names (`--password-file FILE`) are kept:
/// they are not secrets. Everything else is returned unchanged, in order.
public enum CommandLineRedaction {
    /// Options whose value is a secret.
    public static let secretOptions: Set<String> = ["--password"]
    public static let placeholder = "<redacted>"

    public static func redact(_ argv: [String]) -> [String] {
        var result: [String] = []
        result.reserveCapacity(argv.count)
        var redactNext = false
        for argument in argv {
            if redactNext {
                result.append(placeholder)
                redactNext = false
                continue
            }
            if secretOptions.contains(argument) {
                result.append(argument)
                redactNext = true
            } else if let equals = argument.firstIndex(of: "="), secretOptions.contains(String(argument[..<equals])) {
                result.append(argument[..<equals] + "=" + placeholder)
            } else {
                result.append(argument)
            }
        }
        return result
    }
}
