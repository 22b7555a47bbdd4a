import Foundation
import LoadResults

/// Where `xmppload control HOST:PORT …` finds the run's token, in this order:
///
/// 1. `--token-file FILE`: the token in FILE (the run's `<results>/control-token`, or the file
///    given to the run with `--control-token-file`);
/// 2. `--results DIR`: `DIR/control-token`;
/// 3. neither: the newest `control-token` in a directory under `./results` whose manifest says the
///    run serves its control port on PORT (the default `--out` is `results/<time>-<profile>`, and a
///    run removes its generated token file when it ends, so a live run's is found).
///
/// The file is read only when its owner is the user running `control` (a file someone else
/// planted is not trusted). Problems are said without the token.
public enum ControlTokenLocator {
    /// The token and the file it came from.
    public struct Found: Sendable, Equatable {
        public var token: ControlToken
        public var path: String
    }

    public static func locate(
        port: Int, tokenFile: String?, resultsDirectory: String?, searchRoot: String = "results"
    ) throws(ControlToken.FileProblem) -> Found {
        if let tokenFile { return Found(token: try ControlToken.read(from: tokenFile), path: tokenFile) }
        if let resultsDirectory {
            let path = resultsDirectory + "/" + ControlToken.fileName
            guard FileManager.default.fileExists(atPath: path) else {
                throw ControlToken.FileProblem(
                    description:
                        "no \(ControlToken.fileName) in '\(resultsDirectory)': the run writes it there while it serves --control-port (unless it was given --control-token-file: pass that file with --token-file)"
                )
            }
            return Found(token: try ControlToken.read(from: path), path: path)
        }
        let candidates = runsServing(port: port, under: searchRoot)
        guard let newest = candidates.first else {
            throw ControlToken.FileProblem(
                description:
                    "no token for port \(port): no run under ./\(searchRoot) serves it; pass --token-file FILE (the run printed where its token is) or --results DIR"
            )
        }
        return Found(token: try ControlToken.read(from: newest), path: newest)
    }

    /// The token files of runs under `root` whose manifest names `port` as their control port,
    /// owned by this user, newest first.
    static func runsServing(port: Int, under root: String) -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        var found: [(path: String, modified: Date)] = []
        for entry in entries {
            let directory = root + "/" + entry
            let path = directory + "/" + ControlToken.fileName
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                (attributes[.ownerAccountID] as? NSNumber)?.uint32Value == getuid(),
                let manifest = try? ResultsDirectory(path: directory).readManifest(),
                manifest.settings?.controlPort == port
            else { continue }
            found.append((path, attributes[.modificationDate] as? Date ?? .distantPast))
        }
        return found.sorted { $0.modified > $1.modified }.map(\.path)
    }
}
