// PBKDF2 for SCRAM off the event loop, one derivation shared by every session waiting for the same key.
import NIOCore
import NIOPosix
import SessionCore
import XMPPCore

/// Runs SCRAM's PBKDF2 on NIO's thread pool and hands the result to the waiting users on their loop.
/// Concurrent cache misses for the same (password, salt, iterations) — every session at the start of
/// a run — share one derivation. Loop-bound: `derive` is called on `eventLoop`.
final class KeyDerivations {
    private let eventLoop: any EventLoop
    /// Users waiting for a key derivation, by request.
    private var waiting: [SCRAMKeyRequest: [VirtualUser]] = [:]

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Derives `request`'s keys off the loop; `user` gets them as `keyDerived` on this loop.
    func derive(_ request: SCRAMKeyRequest, for user: VirtualUser) {
        if waiting[request] != nil {
            waiting[request]!.append(user)
            return
        }
        waiting[request] = [user]
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        NIOThreadPool.singleton.runIfActive(eventLoop: eventLoop) { () throws -> SCRAMKeys in
            try request.derive()
        }.whenComplete { outcome in
            let derivations = bound.value
            let result: Result<SCRAMKeys, SASLError> = outcome.mapError { error in
                (error as? SASLError) ?? .crypto("key derivation did not run: \(error)")
            }
            for user in derivations.waiting.removeValue(forKey: request) ?? [] {
                user.handle(.keyDerived(result))
            }
        }
    }
}
