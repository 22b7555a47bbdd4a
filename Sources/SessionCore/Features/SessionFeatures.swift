// The request features a session can use: one registration line each.
import LoadProfile
import LoadResults

/// The protocol features whose steps are requests (`RequestFeature`), registered here — one line
/// per feature. A profile's feature steps (`FeatureStep`, decoded by `FeatureStepKind.rows`) name a
/// feature of this list; `SessionScript` registers the counters of the features a profile uses, and
/// a session makes an instance of each only when it first needs it.
enum SessionFeatures {
    static let requestFeatures: [any RequestFeature.Type] = [
        CarbonsFeature.self,
        ClientStateFeature.self,
        ArchiveFeature.self,
        PersonalEventingFeature.self,
        BlockingFeature.self,
    ]

    private static let indices: [String: Int] = Dictionary(
        uniqueKeysWithValues: requestFeatures.enumerated().map { ($0.element.name, $0.offset) })

    /// The registry index of the feature named `name`, if registered.
    static func index(named name: String) -> Int? { indices[name] }

    /// The names of every registered feature.
    public static var names: [String] { requestFeatures.map { $0.name } }
}

/// A session's instances of the request features its profile uses, made on first use. Boxed: a
/// session whose profile has no feature step holds a nil pointer.
final class RequestFeatureSet {
    private var instances: [(any RequestFeature)?]

    init() { instances = Array(repeating: nil, count: SessionFeatures.requestFeatures.count) }

    /// The session's instance of the feature at `index` (made now when it has none).
    func instance(_ index: Int) -> any RequestFeature {
        if let made = instances[index] { return made }
        let made = SessionFeatures.requestFeatures[index].init()
        instances[index] = made
        return made
    }

    /// The instances made so far.
    var made: [(index: Int, feature: any RequestFeature)] {
        instances.enumerated().compactMap { index, feature in feature.map { (index, $0) } }
    }

    /// Offers `body` each instance made so far, in registry order, until it returns true; returns
    /// whether one did (no array is built: this runs for every pushed stanza).
    func first(where body: (Int, any RequestFeature) -> Bool) -> Bool {
        for index in instances.indices {
            if let feature = instances[index], body(index, feature) { return true }
        }
        return false
    }
}
