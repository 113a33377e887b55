import Foundation

/// The tunable parts of the moment rules: the "moments" section of `pipeline.json`.
///
/// JSON keys are snake_case; every key is optional and falls back to the default below:
/// ```json
/// "moments": {
///   "grace_before_seconds": 900, "grace_after_seconds": 900,
///   "automatic_radius_metres": 150, "automatic_time_gap_seconds": 7200,
///   "automatic_visibility": "private",
///   "cover_policy": "best", "cover_margin": 0.1
/// }
/// ```
public struct MomentRules: Sendable, Hashable, Codable {
    /// How long before a declared moment's start a photo still joins it: people arrive early.
    public var graceBefore: TimeInterval
    /// How long after a declared moment's end a photo still joins it: people leave late.
    public var graceAfter: TimeInterval
    /// Linking distance of automatic moments, and the radius of the places created for them
    /// (the seeds' quick moment "sets a default radius").
    public var automaticRadiusMetres: Double
    /// Linking time gap of automatic moments (the seeds' quick moment spans 2 hours).
    public var automaticTimeGap: TimeInterval
    /// Visibility of automatic moments: private to their author, like the seeds' quick moments.
    public var automaticVisibility: Visibility
    /// How the worker picks covers that the creator has not set.
    public var coverPolicy: CoverPolicy
    /// What "clearly better" means for policy `best`: a picture must beat the earliest good
    /// one by more than this many score points (0...1) to take the cover.
    public var coverMargin: Double

    /// The documented defaults (see the type's description).
    public static let `default` = MomentRules()

    /// Rules from their values; each defaults to the documented value.
    public init(graceBefore: TimeInterval = 15 * 60, graceAfter: TimeInterval = 15 * 60,
                automaticRadiusMetres: Double = 150, automaticTimeGap: TimeInterval = 2 * 60 * 60,
                automaticVisibility: Visibility = .private, coverPolicy: CoverPolicy = .best,
                coverMargin: Double = 0.1) {
        self.graceBefore = graceBefore
        self.graceAfter = graceAfter
        self.automaticRadiusMetres = automaticRadiusMetres
        self.automaticTimeGap = automaticTimeGap
        self.automaticVisibility = automaticVisibility
        self.coverPolicy = coverPolicy
        self.coverMargin = coverMargin
    }

    enum CodingKeys: String, CodingKey {
        case graceBefore = "grace_before_seconds"
        case graceAfter = "grace_after_seconds"
        case automaticRadiusMetres = "automatic_radius_metres"
        case automaticTimeGap = "automatic_time_gap_seconds"
        case automaticVisibility = "automatic_visibility"
        case coverPolicy = "cover_policy"
        case coverMargin = "cover_margin"
    }

    /// Decodes the section, taking the default for each absent key.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = MomentRules.default
        graceBefore = try c.decodeIfPresent(TimeInterval.self, forKey: .graceBefore) ?? d.graceBefore
        graceAfter = try c.decodeIfPresent(TimeInterval.self, forKey: .graceAfter) ?? d.graceAfter
        automaticRadiusMetres = try c.decodeIfPresent(Double.self, forKey: .automaticRadiusMetres) ?? d.automaticRadiusMetres
        automaticTimeGap = try c.decodeIfPresent(TimeInterval.self, forKey: .automaticTimeGap) ?? d.automaticTimeGap
        automaticVisibility = try c.decodeIfPresent(Visibility.self, forKey: .automaticVisibility) ?? d.automaticVisibility
        coverPolicy = try c.decodeIfPresent(CoverPolicy.self, forKey: .coverPolicy) ?? d.coverPolicy
        coverMargin = try c.decodeIfPresent(Double.self, forKey: .coverMargin) ?? d.coverMargin
    }

    /// Checks that every value is usable; call it where the configuration is loaded.
    public func validate() throws(MomentError) {
        func require(_ ok: Bool, _ key: CodingKeys, _ value: Double, _ expected: String) throws(MomentError) {
            if !ok { throw .invalidRule(key: key.rawValue, value: value, expected: expected) }
        }
        try require(graceBefore.isFinite && graceBefore >= 0, .graceBefore, graceBefore, "a number of seconds >= 0")
        try require(graceAfter.isFinite && graceAfter >= 0, .graceAfter, graceAfter, "a number of seconds >= 0")
        try require(automaticRadiusMetres.isFinite && automaticRadiusMetres > 0, .automaticRadiusMetres,
                    automaticRadiusMetres, "a distance in metres > 0")
        try require(automaticTimeGap.isFinite && automaticTimeGap >= 0, .automaticTimeGap, automaticTimeGap,
                    "a number of seconds >= 0")
        try require((0...1).contains(coverMargin), .coverMargin, coverMargin, "a score difference in 0...1")
    }
}
