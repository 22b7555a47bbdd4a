/// The stream codec under a `SessionChannelHandler`, as the handler drives it: TCP's
/// `XMPPStreamCodec` or a web transport's codec (`XMPPWebSocketCodec`, `BOSHCodec`).
///
/// `restart()` is called after STARTTLS `<proceed/>` and SASL `<success/>`: the next unit from the
/// server is a new stream header (TCP) or `<open/>` (WebSocket), or the next request carries
/// `xmpp:restart` (BOSH). Loop-bound, like the channel that owns it. A class-bound protocol: the TCP
/// path pays one witness call per restart (two per login), nothing per write.
protocol StreamRestarting: AnyObject {
    func restart()
}

extension XMPPStreamCodec: StreamRestarting {}
