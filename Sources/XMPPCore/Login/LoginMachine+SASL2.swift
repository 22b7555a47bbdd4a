// The SASL2 part of the login machine (XEP-0388): one <authenticate/> carrying Bind2 (XEP-0386),
// inline stream management and carbons, resumption (XEP-0198) and FAST tokens (XEP-0484).

extension LoginMachine {
    /// Starts SASL2: with the FAST token when it is usable here, else with the password.
    mutating func beginSASL2(_ offer: AuthenticationOffer, sasl2: AuthenticationOffer.SASL2) -> [Action] {
        if let token = configuration.fastToken, configuration.userAgentID != nil, let fast = sasl2.fast,
            fast.contains(where: { FASTMechanism(name: $0) == token.mechanism }),
            token.mechanism.channelBinding.map({ (offer.channelBindingTypes ?? []).contains($0.name) }) ?? true,
            let client = HashedTokenClient(
                mechanism: token.mechanism, username: configuration.username, token: token.secret, channelBinding: channelBinding)
        {
            draft.mechanism = token.mechanism.name
            draft.channelBinding = token.mechanism.channelBinding
            draft.downgradeProtection = nil
            var request = inlineRequest(sasl2)
            request.isFAST = true
            request.tokenMechanism = token.mechanism
            let authenticate = authenticateElement(
                mechanism: token.mechanism.name, initialResponse: client.initialResponse(), request: request,
                extra: XMLElement("fast", namespace: AuthenticationOffer.fastNamespace))
            state = .authenticating2(.token(client), request)
            roundTrips += 1
            return [.enterPhase(.sasl), .send(authenticate)] + request.lastMessagePhase
        }
        return authenticateWithPassword(offer, sasl2: sasl2)
    }

    /// SASL2 with the password: SCRAM (`-PLUS` where XEP-0440 allows) or PLAIN, asking for a FAST
    /// token when configured (or when the token given could not be used).
    private mutating func authenticateWithPassword(_ offer: AuthenticationOffer, sasl2: AuthenticationOffer.SASL2) -> [Action] {
        let choice: MechanismChoice
        switch MechanismChoice.choose(
            offered: sasl2.mechanisms, channelBindingTypes: offer.channelBindingTypes, data: channelBinding,
            forced: configuration.mechanism, sasl2: true)
        {
        case .success(let chosen): choice = chosen
        case .failure(let error): return finish(error)
        }
        let (progress, initialResponse) = start(choice, offered: sasl2.mechanisms, channelBindingTypes: offer.channelBindingTypes)
        var request = inlineRequest(sasl2)
        var extra: XMLElement?
        if configuration.requestFASTToken || configuration.fastToken != nil, configuration.userAgentID != nil, let fast = sasl2.fast,
            let mechanism = FASTMechanism.strongest(
                offered: fast, channelBinding: channelBinding, advertisedTypes: offer.channelBindingTypes)
        {
            request.tokenMechanism = mechanism
            extra = XMLElement(
                "request-token", namespace: AuthenticationOffer.fastNamespace, attributes: [XMLAttribute("mechanism", mechanism.name)])
        }
        let authenticate = authenticateElement(
            mechanism: choice.mechanism.name, initialResponse: initialResponse, request: request, extra: extra)
        state = .authenticating2(progress, request)
        roundTrips += 1
        if case .scram = progress { return [.enterPhase(.sasl), .send(authenticate)] }
        return [.enterPhase(.sasl), .send(authenticate)] + request.lastMessagePhase
    }

    /// What the `<authenticate/>` asks for inline, from the configuration and the offer: resumption
    /// when inline stream management is offered (then Bind2 too: the server binds only if the
    /// resumption fails); without inline resumption a resumption waits for the classic one after
    /// SASL2, so nothing is bound inline.
    private func inlineRequest(_ sasl2: AuthenticationOffer.SASL2) -> SASL2Request {
        var request = SASL2Request()
        request.resume = configuration.resume != nil && sasl2.streamManagement
        if let bind2 = sasl2.bind2, configuration.resume == nil || request.resume {
            request.bind = true
            request.streamManagement = configuration.inlineStreamManagement && bind2.streamManagement
            request.carbons = configuration.enableCarbons && bind2.carbons
        }
        return request
    }

    /// `<authenticate mechanism=…>` with the initial response, user agent, Bind2 request, resumption
    /// and `extra` (FAST's `<fast/>` or `<request-token/>`).
    private func authenticateElement(mechanism: String, initialResponse: [UInt8], request: SASL2Request, extra: XMLElement?) -> XMLElement {
        let ns = AuthenticationOffer.sasl2Namespace
        var authenticate = XMLElement("authenticate", namespace: ns, attributes: [XMLAttribute("mechanism", mechanism)])
        // XEP-0388: an empty initial response is an empty element (no "=" as in RFC 6120).
        var response = XMLElement("initial-response", namespace: ns)
        if !initialResponse.isEmpty { response.append(text: Base64.encode(initialResponse)) }
        authenticate.append(response)
        if let id = configuration.userAgentID {
            authenticate.append(
                XMLElement(
                    "user-agent", namespace: ns, attributes: [XMLAttribute("id", id)],
                    children: [.element(Stanza.textElement("software", configuration.userAgentSoftware, namespace: ns))]))
        }
        if request.bind {
            let bind2 = AuthenticationOffer.bind2Namespace
            var bind = XMLElement("bind", namespace: bind2, children: [.element(Stanza.textElement("tag", configuration.bind2Tag, namespace: bind2))])
            if request.streamManagement { bind.append(StreamManagementState.enable(resume: configuration.inlineStreamManagementResume)) }
            if request.carbons { bind.append(XMLElement("enable", namespace: AuthenticationOffer.carbonsNamespace)) }
            authenticate.append(bind)
        }
        if request.resume, let resume = configuration.resume { authenticate.append(resume) }
        if let extra { authenticate.append(extra) }
        return authenticate
    }

    mutating func handleSASL2(_ element: XMLElement, progress: SASLProgress, request: SASL2Request) -> [Action] {
        switch element.name {
        case "challenge":
            guard case .scram(let client, let sentFinal) = progress else {
                return finish(.protocolViolation("unexpected SASL2 challenge for \(draft.mechanism)"))
            }
            return scramChallenge(element, client: client, sentFinal: sentFinal)
        case "success":
            return sasl2Success(element, progress: progress, request: request)
        case "failure":
            let condition = Stanza.errorCondition(of: element, conditionNamespace: XMPPNamespace.sasl)
            let text =
                (element.firstChild(named: "text", namespace: AuthenticationOffer.sasl2Namespace)
                ?? element.firstChild(named: "text", namespace: XMPPNamespace.sasl))?.text
            if request.isFAST, let offer, let sasl2 = offer.sasl2 {
                // XEP-0484: discard the token and fall back; the stream is unchanged after a SASL2 failure.
                fastTokenRejected = condition
                draft.fastTokenRejected = condition
                return authenticateWithPassword(offer, sasl2: sasl2)
            }
            return finish(.saslFailure(condition: condition, text: text))
        case "continue":
            let tasks =
                element.firstChild(named: "tasks", namespace: AuthenticationOffer.sasl2Namespace)?
                .children(named: "task", namespace: AuthenticationOffer.sasl2Namespace).prefix(8).map(\.text) ?? []
            return finish(.sasl2Continue(tasks: Array(tasks)))
        default:
            return unexpected(element)
        }
    }

    /// SASL2 `<success/>`: verify the mechanism's proof, take the token, then the resumption's or
    /// Bind2's outcome; the features that follow end the login (not after a resumption: ejabberd
    /// sends none then, and a feature element after the login is no stanza).
    private mutating func sasl2Success(_ element: XMLElement, progress: SASLProgress, request: SASL2Request) -> [Action] {
        let ns = AuthenticationOffer.sasl2Namespace
        let additional = element.firstChild(named: "additional-data", namespace: ns).map { Self.decodeBase64($0.text) } ?? nil
        if let error = verifySuccess(additional, progress: progress) { return finish(error) }
        if let mechanism = request.tokenMechanism, let token = element.firstChild(named: "token", namespace: AuthenticationOffer.fastNamespace),
            let secret = token.attribute("token"), !secret.isEmpty, secret.utf8.count <= FASTToken.maxLength
        {
            draft.newFASTToken = FASTToken(mechanism: mechanism, secret: secret, expiry: String((token.attribute("expiry") ?? "").prefix(64)))
        }
        let identifier = element.firstChild(named: "authorization-identifier", namespace: ns)?.text
        let sm = XMPPNamespace.streamManagement
        if let resumedElement = element.firstChild(named: "resumed", namespace: sm) { return resumed(resumedElement) }
        var actions: [Action] = []
        if request.resume {
            inlineResumeTried = true
            if let failed = element.firstChild(named: "failed", namespace: sm) {
                draft.resumeFailed = true
                actions.append(.resumeFailed(failed))
            }
        }
        if let bound = element.firstChild(named: "bound", namespace: AuthenticationOffer.bind2Namespace) {
            draft.path = request.isFAST ? .fast : .sasl2Bind2
            if request.streamManagement {
                if let enabled = bound.firstChild(named: "enabled", namespace: sm) {
                    draft.streamManagement = .enabled(enabled, StreamManagementState.grant(in: enabled))
                } else if let failed = bound.firstChild(named: "failed", namespace: sm) {
                    draft.streamManagement = .failed(condition: Stanza.errorCondition(of: failed, conditionNamespace: XMPPNamespace.stanzas))
                } else {
                    draft.streamManagement = .unanswered
                }
            }
            draft.carbonsEnabled = request.carbons
            state = .awaitingFeatures(.afterBind2(jid: identifier ?? "\(configuration.username)@\(configuration.domain)"))
            return actions + (request.resume ? [.enterPhase(.bind)] : [])
        }
        // Authenticated, nothing bound: the features that follow offer the classic bind.
        draft.path = request.isFAST ? .fast : .sasl2
        state = .awaitingFeatures(.afterSASL)
        return actions + [.enterPhase(.bind)]
    }
}
