extension ServerFacts {
    /// Fills every fact `self` does not know yet from `other` (facts arrive piecemeal: the login's,
    /// then the version answer, the disco answer, the TLS handshake).
    public mutating func merge(_ other: ServerFacts) {
        softwareName = softwareName ?? other.softwareName
        softwareVersion = softwareVersion ?? other.softwareVersion
        operatingSystem = operatingSystem ?? other.operatingSystem
        identities = identities ?? other.identities
        features = features ?? other.features
        streamFeatures = streamFeatures ?? other.streamFeatures
        saslMechanism = saslMechanism ?? other.saslMechanism
        saslChannelBinding = saslChannelBinding ?? other.saslChannelBinding
        loginPath = loginPath ?? other.loginPath
        tlsVersion = tlsVersion ?? other.tlsVersion
        tlsCipher = tlsCipher ?? other.tlsCipher
    }
}
