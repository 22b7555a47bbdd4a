/// One entry of a file's `servers:` list, kept as written so `--var` can change it before the run:
/// the `--server` text (`HOST:PORT[,weight=W]` or a URL with an optional `,weight=W`; a mapping
/// `{server, weight}` is joined into that form) as a template over the file's `variables:`, and
/// where it stands in the file.
///
/// Invariant (checked when the file is loaded): every `${name}` is one of the file's variables, and
/// the text rendered with the file's own values parses with `WeightedEndpoint.parse`.
public struct ServerEntry: Sendable, Equatable {
    public var text: Template
    public var location: SourceLocation

    public init(text: Template, location: SourceLocation) {
        self.text = text
        self.location = location
    }

    /// The endpoint with `variables` substituted; throws the one problem at the entry's place.
    public func endpoint(variables: [String: String]) throws(ProfileErrors) -> WeightedEndpoint {
        let rendered = text.render { variables[$0] }
        switch WeightedEndpoint.parse(rendered) {
        case .success(let endpoint):
            return endpoint
        case .failure(let error):
            let substituted = text.variables.isEmpty ? "" : " (from '\(text.source)')"
            throw ProfileErrors(problems: [
                ProfileProblem(
                    location: location, message: "servers: \(error.message)\(substituted)",
                    hint:
                        "write HOST:PORT[,weight=W] or ws://, wss://, http://, https:// URL[,weight=W] (weight 1...\(WeightedEndpoint.maximumWeight))"
                )
            ])
        }
    }
}
