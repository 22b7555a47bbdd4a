import Foundation

/// Hex digests for labels (e.g. the profile's SHA-256 in the results manifest).
public enum Digest {
    public static func sha256Hex(_ bytes: [UInt8]) -> String {
        CryptoPrimitives.hash(.sha256, bytes).map { String(format: "%02x", $0) }.joined()
    }
}
