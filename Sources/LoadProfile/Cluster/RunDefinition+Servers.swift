extension RunDefinition {
    /// The file's `servers:` as endpoints, with the file's `variables:` (after `--var`) substituted;
    /// empty when the file has none. Throws every bad entry at once, each at its file:line:column.
    public func serverEndpoints() throws(ProfileErrors) -> [WeightedEndpoint] {
        var endpoints: [WeightedEndpoint] = []
        var problems: [ProfileProblem] = []
        for entry in servers {
            do { endpoints.append(try entry.endpoint(variables: variables)) } catch { problems += error.problems }
        }
        guard problems.isEmpty else { throw ProfileErrors(problems: problems) }
        return endpoints
    }
}
