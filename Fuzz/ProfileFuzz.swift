// libFuzzer entry point for the profile decoder (built by scripts/fuzz, not by `swift build`): the
// input is a YAML profile as a user might write it; `ProfileLoader.load(yaml:file:)` must either
// return a definition or report problems (`ProfileErrors`), never crash or hang. Compiled into the
// same module as Sources/LoadProfile, against Yams and XMPPCore built with the same sanitizers.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProfile(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    do {
        let definition = try ProfileLoader.load(yaml: text, file: "fuzz.yaml")
        precondition(!definition.profiles.isEmpty, "a loaded definition has at least one profile")
    } catch {
        precondition(!error.problems.isEmpty, "a failure reports at least one problem")
    }
    return 0
}
