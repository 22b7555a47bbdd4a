// The SASL part of the login machine: choosing a mechanism, SCRAM and PLAIN exchanges, key derivation.

extension LoginMachine {
    mutating func beginSASL(offered: [String]) -> [Action] {
        guard let mechanism = SASLMechanism.choose(offered: offered, forced: configuration.mechanism) else {
            if let forced = configuration.mechanism { return finish(.forcedMechanismNotOffered(forced, offered: offered)) }
            return finish(.noCommonMechanism(offered: offered))
        }
        chosenMechanism = mechanism
        let initialResponse: [UInt8]
        switch mechanism.scramAlgorithm {
        case .some(let algorithm):
            let client = SCRAMClient(
                algorithm: algorithm, username: configuration.username,
                password: configuration.password, cache: keyCache,
                maxIterations: configuration.maxSCRAMIterations)
            initialResponse = client.clientFirstMessage()
            state = .authenticating(.scram(client, sentFinal: false))
        case .none:
            switch mechanism {
            case .plain:
                initialResponse = SASLPlain(username: configuration.username, password: configuration.password).initialResponse()
            default:
                initialResponse = SASLAnonymous().initialResponse()
            }
            state = .authenticating(.simple)
        }
        let auth = XMLElement(
            "auth", namespace: XMPPNamespace.sasl,
            attributes: [XMLAttribute("mechanism", mechanism.name)],
            children: [.text(Self.base64(initialResponse))])
        return [.enterPhase(.sasl), .send(auth)]
    }

    /// Call with the outcome of a `.deriveKey` request (on the loop the machine lives on).
    public mutating func keyDerived(_ result: Result<SCRAMKeys, SASLError>) -> [Action] {
        guard case .authenticating(.derivingKeys(var client, let request)) = state else { return [] }
        switch result {
        case .success(let keys):
            keyCache?.store(keys, for: request)
            return sendClientFinal(&client, keys: keys)
        case .failure(let error):
            return finish(.sasl(kind: error.kind, detail: error.description))
        }
    }

    private mutating func sendClientFinal(_ client: inout SCRAMClient, keys: SCRAMKeys) -> [Action] {
        let final = client.clientFinalMessage(keys: keys)
        state = .authenticating(.scram(client, sentFinal: true))
        return [.send(XMLElement("response", namespace: XMPPNamespace.sasl, children: [.text(Self.base64(final))]))]
    }

    mutating func handleSASL(_ element: XMLElement, progress: SASLProgress) -> [Action] {
        switch element.name {
        case "challenge":
            guard case .scram(var client, let sentFinal) = progress else {
                return finish(.protocolViolation("unexpected SASL challenge for \(chosenMechanism?.name ?? "?")"))
            }
            guard let data = Self.decodeBase64(element.text) else {
                return finish(.sasl(kind: "sasl-malformed", detail: "challenge is not valid base64"))
            }
            do {
                if !sentFinal {
                    let request = try client.keyRequest(serverFirst: data)
                    if let keys = keyCache?.cachedKeys(for: request) {
                        return sendClientFinal(&client, keys: keys)
                    }
                    if configuration.deriveKeysElsewhere {
                        state = .authenticating(.derivingKeys(client, request))
                        return [.deriveKey(request)]
                    }
                    let keys = try request.derive()
                    keyCache?.store(keys, for: request)
                    return sendClientFinal(&client, keys: keys)
                }
                // Some servers send server-final-message as a challenge and an empty <success/> after it.
                try client.verifyServerFinal(data)
                state = .authenticating(.simple)
                return [.send(XMLElement("response", namespace: XMPPNamespace.sasl))]
            } catch {
                return finish(.sasl(kind: error.kind, detail: error.description))
            }
        case "success":
            if case .derivingKeys = progress {
                return finish(.sasl(kind: "sasl-server-signature", detail: "success before our SCRAM proof was sent"))
            }
            if case .scram(let client, _) = progress {
                guard let data = Self.decodeBase64(element.text), !data.isEmpty else {
                    return finish(.sasl(kind: "sasl-server-signature", detail: "success without the server's signature"))
                }
                do { try client.verifyServerFinal(data) } catch {
                    return finish(.sasl(kind: error.kind, detail: error.description))
                }
            }
            state = .awaitingFeatures(.afterSASL)
            return [.enterPhase(.bind), .restartStream]
        case "failure":
            let text = element.firstChild(named: "text", namespace: XMPPNamespace.sasl)?.text
            return finish(.saslFailure(condition: Stanza.errorCondition(of: element, conditionNamespace: XMPPNamespace.sasl), text: text))
        default:
            return unexpected(element)
        }
    }

    /// RFC 6120 §6.4.2: an empty response is sent as "=".
    static func base64(_ bytes: [UInt8]) -> String {
        bytes.isEmpty ? "=" : Base64.encode(bytes)
    }

    static func decodeBase64(_ text: String) -> [UInt8]? {
        // Whitespace is allowed around (and by some servers inside) the payload: skipped byte-wise.
        let payload = text.utf8.lazy.filter { !Base64.isWhitespace($0) }
        if payload.isEmpty || payload.elementsEqual([UInt8(ascii: "=")]) { return [] }
        return Base64.decode(text.utf8, skippingWhitespace: true)
    }
}
