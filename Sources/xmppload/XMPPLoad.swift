import ArgumentParser

/// The `xmppload` command line: one sub-command per file.
@main
struct XMPPLoad: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "xmppload",
        abstract: "Load and soak testing for XMPP servers.",
        subcommands: [RunCommand.self]
    )
}
