import ArgumentParser
import LoadEngine
import LoadRunners
import XMPPCore

/// `run`'s limits on what one session accepts from the server (docs/HARDENING.md): the inbound XML
/// limits (`XMLLimits`) and the SCRAM iteration cap, as an `@OptionGroup`. Declarations only:
/// `SessionLimitOptions` (LoadEngine) checks them with every other run option, at once.
struct HardeningOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Largest stream header or depth-1 element (stanza) accepted from the server; more ends the session with xml-limit-element-size.",
            valueName: "SIZE"))
    var maxElementSize: String = "256KiB"

    @Option(
        help: ArgumentHelp(
            "Most bytes one session buffers that do not yet form a complete element (xml-limit-buffer); default max(512KiB, --max-element-size).",
            valueName: "SIZE"))
    var maxBuffered: String?

    @Option(help: ArgumentHelp("Deepest element nesting inside a stanza (xml-limit-depth).", valueName: "N"))
    var maxDepth: Int = XMLLimits.default.maxDepth

    @Option(help: ArgumentHelp("Most attributes on one start tag, namespace declarations included (xml-limit-attributes).", valueName: "N"))
    var maxAttributes: Int = XMLLimits.default.maxAttributesPerElement

    @Option(help: ArgumentHelp("Most namespace declarations on the server's stream header (xml-limit-namespaces).", valueName: "N"))
    var maxHeaderNamespaces: Int = XMLLimits.default.maxHeaderNamespaces

    @Option(
        help: ArgumentHelp(
            "Highest SCRAM iteration count a server may ask for; more fails the login with sasl-iteration-count before any PBKDF2 work.",
            valueName: "N"))
    var maxScramIterations: Int = SCRAMClient.defaultMaxIterations

    /// The limits as written, for `RunOptionsResolver` (which checks them).
    var values: SessionLimitOptions {
        var values = SessionLimitOptions()
        values.maxElementSize = maxElementSize
        values.maxBuffered = maxBuffered
        values.maxDepth = maxDepth
        values.maxAttributes = maxAttributes
        values.maxHeaderNamespaces = maxHeaderNamespaces
        values.maxScramIterations = maxScramIterations
        return values
    }
}
