import Foundation
import Yams

/// The `load:` section (phases of a `LoadPlan`) and `mix:` files.
extension ProfileDecoder {

    mutating func decodeLoad(_ node: Node) -> LoadPlan? {
        guard let map = mapping(node, "load") else { return nil }
        checkKeys(map, allowed: ["phases", "duration_cap", "graceful_stop", "seed"], "load")
        var plan = LoadPlan(phases: [])
        if let value = map["seed"], let text = string(value, "seed") {
            if let seed = UInt64(text) { plan.seed = seed } else { problem(value, "seed must be a non-negative whole number") }
        }
        if let value = map["duration_cap"] { plan.durationCap = duration(value, "duration_cap") }
        if let value = map["graceful_stop"], let grace = duration(value, "graceful_stop", allowZero: true) { plan.gracefulStop = grace }
        guard let phasesNode = map["phases"] else {
            problem(node, "load needs 'phases'", hint: "e.g. phases: [{users: 100, ramp: 10s, duration: 1m}]")
            return nil
        }
        guard let list = sequence(phasesNode, "load.phases") else { return nil }
        for (index, item) in list.enumerated() {
            if let phase = decodePhase(item, index: index) { plan.phases.append(phase) }
        }
        if list.count == 0 { problem(phasesNode, "load.phases is empty") }
        return plan.phases.isEmpty ? nil : plan
    }

    mutating func decodePhase(_ node: Node, index: Int) -> LoadPhase? {
        guard let map = mapping(node, "a load phase") else { return nil }
        checkKeys(map, allowed: ["name", "users", "ramp", "rate", "duration", "max_sessions"], "a load phase")
        let name = map["name"].flatMap { string($0, "phase name") } ?? "phase\(index + 1)"
        let duration = map["duration"].flatMap { self.duration($0, "phase duration") }
        let maxSessions = map["max_sessions"].flatMap { int($0, "max_sessions", maximum: Self.maximumUsers) }
        var model: LoadModel?
        switch (map["users"], map["rate"]) {
        case (.some, .some):
            problem(node, "a phase is closed (users) or open (rate), not both", hint: "split it into two phases")
            return nil
        case (nil, nil):
            problem(node, "a phase needs 'users' (closed model) or 'rate' (open model)")
            return nil
        case (.some(let users), nil):
            if case .mapping(let range) = users {
                checkKeys(range, allowed: ["from", "to"], "users")
                guard let from = range["from"].flatMap({ int($0, "users.from", minimum: 0, maximum: Self.maximumUsers) }),
                    let to = range["to"].flatMap({ int($0, "users.to", minimum: 1, maximum: Self.maximumUsers) })
                else {
                    if range["from"] == nil || range["to"] == nil { problem(users, "users needs from and to") }
                    return nil
                }
                if to < from {
                    problem(users, "users ramp goes down (\(from) → \(to))", hint: "closed users can only ramp up; end the phase instead")
                }
                if duration == nil { problem(node, "a ramping-users phase needs 'duration'") }
                if map["ramp"] != nil { problem(map["ramp"], "'ramp' is for a fixed number of users; a from/to phase ramps over its duration") }
                model = .rampingUsers(from: from, to: to)
            } else if let count = int(users, "users", maximum: Self.maximumUsers) {
                let ramp = map["ramp"].flatMap { self.duration($0, "ramp", allowZero: true) } ?? .zero
                if let duration, ramp > duration {
                    problem(map["ramp"], "ramp is longer than the phase", hint: "make duration at least \(DurationText.format(ramp))")
                }
                model = .closed(users: count, ramp: ramp)
            }
        case (nil, .some(let rate)):
            if map["ramp"] != nil { problem(map["ramp"], "'ramp' is for closed phases; an open phase ramps with rate: {from, to}") }
            if case .mapping(let range) = rate {
                checkKeys(range, allowed: ["from", "to"], "rate")
                let from = range["from"].flatMap { number($0, "rate.from", maximum: Self.maximumRate) }
                let to = range["to"].flatMap { number($0, "rate.to", maximum: Self.maximumRate) }
                if range["from"] == nil || range["to"] == nil { problem(rate, "rate needs from and to") }
                if let from, let to {
                    if from == 0 && to == 0 { problem(rate, "a rate from 0 to 0 starts nothing") } else { model = .openRamping(from: from, to: to) }
                }
            } else if let value = number(rate, "rate", minimum: 0, exclusive: true, maximum: Self.maximumRate) {
                model = .openConstant(rate: value)
            }
            if duration == nil { problem(node, "an open phase needs 'duration'") }
        }
        guard let model else { return nil }
        if let duration, model.isOpen, ArrivalSchedule.arrivalCount(LoadPhase(name: name, model: model, duration: duration)) == 0 {
            problem(
                node, "this phase starts no session: \(LoadPhase(name: name, model: model, duration: duration).loadText) is less than one arrival",
                hint: "raise the rate or lengthen the phase")
        }
        if case .closed(_, let ramp) = model, duration == nil {
            return LoadPhase(name: name, model: model, duration: ramp, maxSessions: maxSessions, open: true)
        }
        guard let duration else { return nil }
        return LoadPhase(name: name, model: model, duration: duration, maxSessions: maxSessions)
    }

    // MARK: - Mix

    mutating func decodeMix(_ node: Node, depth: Int) -> [WeightedProfile]? {
        guard let list = sequence(node, "mix") else { return nil }
        if depth > 2 {
            problem(node, "mixes nest too deep", hint: "a mix lists profiles, not other mixes")
            return nil
        }
        var result: [WeightedProfile] = []
        let directory = URL(fileURLWithPath: file).deletingLastPathComponent()
        for item in list {
            guard let map = mapping(item, "a mix entry") else { continue }
            checkKeys(map, allowed: ["profile", "weight"], "a mix entry")
            let weight = map["weight"].flatMap { number($0, "weight", minimum: 0, exclusive: true) }
            if map["weight"] == nil { problem(item, "a mix entry needs 'weight'") }
            guard let pathNode = map["profile"], let relative = string(pathNode, "profile") else {
                if map["profile"] == nil { problem(item, "a mix entry needs 'profile' (a file path)") }
                continue
            }
            let path = relative.hasPrefix("/") ? relative : directory.appendingPathComponent(relative).path
            guard let data = FileManager.default.contents(atPath: path) else {
                problem(pathNode, "cannot read profile '\(relative)'", hint: "paths are relative to \(directory.path)")
                continue
            }
            do {
                let nested = try ProfileLoader.load(yaml: String(decoding: data, as: UTF8.self), file: path, bytes: Array(data), depth: depth + 1)
                if nested.profiles.count != 1 { problem(pathNode, "'\(relative)' is itself a mix", hint: "list its profiles here instead") }
                if let weight, let profile = nested.profiles.first {
                    result.append(WeightedProfile(weight: weight, profile: profile.profile, path: path, bytes: Array(data)))
                }
            } catch {
                problems.append(contentsOf: error.problems)
            }
        }
        if list.count == 0 { problem(node, "mix is empty") }
        return result.isEmpty ? nil : result
    }

}
