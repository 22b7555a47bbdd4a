import CCrypto
import Synchronization

/// Random bytes handed out from blocks of `blockSize` bytes drawn from libcrypto's CSPRNG, each byte
/// once. A SCRAM nonce needs 18 bytes; one `RAND_bytes` call per nonce cost ~23 µs per login in a
/// load run (perf: OpenSSL 3.0's per-call provider lookups and DRBG setup, cold in a busy event
/// loop), about 3 % of the generator's user CPU per login, where a 4 KiB block costs about what one
/// small call does. Process-wide and thread-safe (a mutex around the block).
final class RandomPool: Sendable {
    /// The pool SCRAM's nonces come from.
    static let shared = RandomPool()

    /// Bytes drawn from libcrypto per refill.
    static let blockSize = 4096

    private let block = Mutex<(bytes: [UInt8], next: Int)>(([], 0))

    /// `count` bytes no other call has been or will be given; larger requests than a block are drawn
    /// directly.
    func bytes(_ count: Int) -> [UInt8] {
        guard count <= Self.blockSize else { return Self.draw(count) }
        return block.withLock { block in
            if block.bytes.count - block.next < count {
                block.bytes = Self.draw(Self.blockSize)
                block.next = 0
            }
            defer { block.next += count }
            return Array(block.bytes[block.next..<block.next + count])
        }
    }

    /// `count` fresh bytes from libcrypto (the system generator should libcrypto fail).
    static func draw(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let ok = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        if ok != 1 {
            var generator = SystemRandomNumberGenerator()
            for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255, using: &generator) }
        }
        return bytes
    }
}
