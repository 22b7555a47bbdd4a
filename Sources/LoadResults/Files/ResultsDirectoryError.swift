import Foundation

/// Why a results directory cannot be used.
public enum ResultsDirectoryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The directory already holds a run (manifest, intervals, summary or report) and overwriting
    /// was not asked for.
    case holdsRun(String)
    /// The directory (`path`) cannot be created or written by this process: `blocking` is the
    /// nearest existing directory on the way, `owner` and `mode` its owner's uid and permission bits,
    /// `uid` this process's; `inContainer` when the process runs in a container (a mounted folder
    /// the host's root owns is the usual cause there).
    case notWritable(path: String, blocking: String, owner: UInt32, mode: UInt16, uid: UInt32, inContainer: Bool)

    public var description: String {
        switch self {
        case .holdsRun(let path):
            return "'\(path)' already holds a run; choose another --out or pass --overwrite to replace it"
        case .notWritable(let path, let blocking, let owner, let mode, let uid, let inContainer):
            let octal = String(mode & 0o7777, radix: 8)
            var text =
                "cannot write the results to '\(path)': permission denied — '\(blocking)' belongs to uid \(owner) (mode \(octal)) and xmppload runs as uid \(uid)"
            if inContainer {
                text +=
                    ". In a container, mount a folder this user can write: with podman add `:U` to the volume (`-v DIR:/results:U`, podman hands it to the container's user), or `chown \(uid) DIR` on the host first (Kubernetes: `securityContext.fsGroup: \(uid)`); or write inside the container and copy the results out"
            } else {
                text += "; choose another --out, or make that directory writable for uid \(uid)"
            }
            return text
        }
    }

    /// The `notWritable` error for `path` when this process cannot create or write it, else nil:
    /// the nearest existing directory on the way must be writable (and searchable) by this process.
    static func checkWritable(_ path: String) -> ResultsDirectoryError? {
        var current = URL(fileURLWithPath: path).standardizedFileURL.path
        var info = stat()
        while stat(current, &info) != 0 {
            let parent = (current as NSString).deletingLastPathComponent
            guard parent != current, !parent.isEmpty else { return nil }
            current = parent
        }
        guard access(current, W_OK | X_OK) != 0, errno == EACCES || errno == EPERM || errno == EROFS else { return nil }
        return .notWritable(
            path: path, blocking: current, owner: info.st_uid, mode: UInt16(info.st_mode & 0o7777), uid: getuid(),
            inContainer: isInContainer)
    }

    /// True inside a podman (`/run/.containerenv`) or docker (`/.dockerenv`) container, or a
    /// Kubernetes pod.
    static var isInContainer: Bool {
        FileManager.default.fileExists(atPath: "/run/.containerenv") || FileManager.default.fileExists(atPath: "/.dockerenv")
            || ProcessInfo.processInfo.environment["KUBERNETES_SERVICE_HOST"] != nil
    }
}
