/// Why a results directory cannot be used.
public enum ResultsDirectoryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The directory already holds a run (manifest, intervals, summary or report) and overwriting
    /// was not asked for.
    case holdsRun(String)

    public var description: String {
        switch self {
        case .holdsRun(let path):
            "'\(path)' already holds a run; choose another --out or pass --overwrite to replace it"
        }
    }
}
