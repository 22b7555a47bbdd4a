// The SASL part of the login machine: choosing a mechanism, SCRAM and PLAIN exchanges, key derivation.

extension LoginMachine {
    /// RFC 6120 SASL over the offer's `<mechanisms/>`.
    mutating func beginSASL(_ offer: AuthenticationOffer) -> [Action] {
        let choice: MechanismChoice
        switch MechanismChoice.choose(
            offered: offer.mechanisms, channelBindingTypes: offer.channelBindingTypes, data: channelBinding,
            forced: configuration.mechanism, sasl2: false)
        {
        case .success(let chosen): choice = chosen
        case .failure(let error): return finish(error)
        }
        let (progress, initialResponse) = start(choice, offered: offer.mechanisms, channelBindingTypes: offer.channelBindingTypes)
        state = .authenticating(progress)
        let auth = XMLElement(
            "auth", namespace: XMPPNamespace.sasl,
            attributes: [XMLAttribute("mechanism", choice.mechanism.name)],
            children: [.text(Self.base64(initialResponse))])
        roundTrips += 1
        return [.enterPhase(.sasl), .send(auth)]
    }

    /// The progress and initial response of a password mechanism (SCRAM, PLAIN, ANONYMOUS); records
    /// the mechanism and its binding in `draft`.
    mutating func start(_ choice: MechanismChoice, offered: [String], channelBindingTypes: [String]?) -> (SASLProgress, [UInt8]) {
        chosenMechanism = choice.mechanism
        draft.mechanism = choice.mechanism.name
        draft.channelBinding = choice.channelBinding.type
        switch choice.mechanism.scramAlgorithm {
        case .some(let algorithm):
            let client = SCRAMClient(
                algorithm: algorithm, username: configuration.username,
                password: configuration.password, cache: keyCache,
                maxIterations: configuration.maxSCRAMIterations, channelBinding: choice.channelBinding,
                downgradeProtection: SCRAMDowngradeProtection(mechanisms: offered, channelBindingTypes: channelBindingTypes))
            return (.scram(client, sentFinal: false), client.clientFirstMessage())
        case .none:
            if choice.mechanism == .plain {
                return (.simple, SASLPlain(username: configuration.username, password: configuration.password).initialResponse())
            }
            return (.simple, SASLAnonymous().initialResponse())
        }
    }

    /// Call with the outcome of a `.deriveKey` request (on the loop the machine lives on).
    public mutating func keyDerived(_ result: Result<SCRAMKeys, SASLError>) -> [Action] {
        let client: SCRAMClient
        let request: SCRAMKeyRequest
        switch state {
        case .authenticating(.derivingKeys(let waiting, let derived)): (client, request) = (waiting, derived)
        case .authenticating2(.derivingKeys(let waiting, let derived), _): (client, request) = (waiting, derived)
        default: return []
        }
        switch result {
        case .success(let keys):
            keyCache?.store(keys, for: request)
            var client = client
            return sendClientFinal(&client, keys: keys)
        case .failure(let error):
            return finish(.sasl(kind: error.kind, detail: error.description))
        }
    }

    /// Sends SCRAM's client-final message (as SASL1 `<response/>` or SASL2 `<response/>`).
    mutating func sendClientFinal(_ client: inout SCRAMClient, keys: SCRAMKeys) -> [Action] {
        let final = client.clientFinalMessage(keys: keys)
        roundTrips += 1
        if case .authenticating2(_, let request) = state {
            state = .authenticating2(.scram(client, sentFinal: true), request)
            return [.send(XMLElement("response", namespace: AuthenticationOffer.sasl2Namespace, children: [.text(Self.base64(final))]))]
                + request.lastMessagePhase
        }
        state = .authenticating(.scram(client, sentFinal: true))
        return [.send(XMLElement("response", namespace: XMPPNamespace.sasl, children: [.text(Self.base64(final))]))]
    }

    /// A SCRAM challenge (server-first, or server-final sent as a challenge) in either SASL profile.
    mutating func scramChallenge(_ element: XMLElement, client: SCRAMClient, sentFinal: Bool) -> [Action] {
        var client = client
        guard let data = Self.decodeBase64(element.text) else {
            return finish(.sasl(kind: "sasl-malformed", detail: "challenge is not valid base64"))
        }
        do {
            if !sentFinal {
                let request = try client.keyRequest(serverFirst: data)
                draft.downgradeProtection = client.downgradeCheck
                if let keys = keyCache?.cachedKeys(for: request) {
                    return sendClientFinal(&client, keys: keys)
                }
                if configuration.deriveKeysElsewhere {
                    if case .authenticating2(_, let attempt) = state {
                        state = .authenticating2(.derivingKeys(client, request), attempt)
                    } else {
                        state = .authenticating(.derivingKeys(client, request))
                    }
                    return [.deriveKey(request)]
                }
                let keys = try request.derive()
                keyCache?.store(keys, for: request)
                return sendClientFinal(&client, keys: keys)
            }
            // Some servers send server-final-message as a challenge and an empty <success/> after it.
            try client.verifyServerFinal(data)
            roundTrips += 1
            if case .authenticating2(_, let attempt) = state {
                state = .authenticating2(.simple, attempt)
                return [.send(XMLElement("response", namespace: AuthenticationOffer.sasl2Namespace))]
            }
            state = .authenticating(.simple)
            return [.send(XMLElement("response", namespace: XMPPNamespace.sasl))]
        } catch {
            return finish(.sasl(kind: error.kind, detail: error.description))
        }
    }

    mutating func handleSASL(_ element: XMLElement, progress: SASLProgress) -> [Action] {
        switch element.name {
        case "challenge":
            guard case .scram(let client, let sentFinal) = progress else {
                return finish(.protocolViolation("unexpected SASL challenge for \(chosenMechanism?.name ?? "?")"))
            }
            return scramChallenge(element, client: client, sentFinal: sentFinal)
        case "success":
            if let error = verifySuccess(Self.decodeBase64(element.text), progress: progress) { return finish(error) }
            state = .awaitingFeatures(.afterSASL)
            roundTrips += 1
            return [.enterPhase(.bind), .restartStream]
        case "failure":
            let text = element.firstChild(named: "text", namespace: XMPPNamespace.sasl)?.text
            return finish(.saslFailure(condition: Stanza.errorCondition(of: element, conditionNamespace: XMPPNamespace.sasl), text: text))
        default:
            return unexpected(element)
        }
    }

    /// Checks the data of a `<success/>` (SASL1 text, SASL2 `<additional-data/>`; nil: absent or not
    /// base64) against the mechanism: SCRAM's server signature, a FAST token's server proof.
    func verifySuccess(_ data: [UInt8]?, progress: SASLProgress) -> LoginError? {
        switch progress {
        case .derivingKeys:
            return .sasl(kind: "sasl-server-signature", detail: "success before our SCRAM proof was sent")
        case .scram(let client, _):
            guard let data, !data.isEmpty else {
                return .sasl(kind: "sasl-server-signature", detail: "success without the server's signature")
            }
            do { try client.verifyServerFinal(data) } catch {
                let bound =
                    client.channelBinding.type.map { " (bound to \($0.name): a man in the middle, or channel-binding data that differ)" } ?? ""
                return .sasl(kind: error.kind, detail: error.description + (error.kind == "sasl-server-signature" ? bound : ""))
            }
            return nil
        case .token(let client):
            guard let data, client.verifyServerProof(data) else {
                return .sasl(
                    kind: "sasl-server-signature", detail: "the server's FAST proof (\(client.mechanism.name)) is missing or does not verify")
            }
            return nil
        case .simple:
            return nil
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
