import Foundation

/// Finds the sidecar files of the photos of one folder by their names, the way the tools that
/// write them name them. Pure: names in, pairs out.
///
/// JSON sidecars (Darkroom's own or Google Takeout's; their keys tell them apart later):
/// - `IMG_1.jpg.json`, and Takeout's newer `IMG_1.jpg.supplemental-metadata.json`;
/// - Takeout's cut names: the JSON file's name before `.json` is cut at 46 or 47 characters
///   (`Screenshot_20190101-123456_Some Long App Nam.json`), which also cuts the
///   `.supplemental-metadata` suffix anywhere (`IMG_1.jpg.supplemental-met.json`);
/// - Takeout's numbered copies: `IMG_1(1).jpg` has `IMG_1.jpg(1).json` (the number moves to the
///   end of the JSON's name, after any cut);
/// - Takeout's name without the photo's extension: `IMG_1.json`;
/// - Takeout's edited copies: `IMG_1-edited.jpg` shares the JSON of `IMG_1.jpg`.
///
/// XMP sidecars: `IMG_1.jpg.xmp` (darktable, digiKam), else `IMG_1.xmp` (Lightroom, Capture One),
/// which a raw file and its JPEG may share.
///
/// Each JSON file goes to at most one photo (the edited copies aside), the closest name first, so
/// that `IMG_1.jpg.json` is never taken by `IMG_1(1).jpg`.
public enum ImportSidecarMatcher {
    /// How a JSON sidecar's name was matched, closest first.
    public enum Rule: Int, Sendable, Comparable, CaseIterable {
        /// `IMG_1.jpg.json`.
        case exact
        /// `IMG_1.jpg.supplemental-metadata.json`, whole or cut.
        case supplemental
        /// The name cut at Takeout's length limit.
        case truncated
        /// `IMG_1.json`: the photo's name without its extension.
        case withoutExtension
        /// `IMG_1-edited.jpg` sharing the sidecar of `IMG_1.jpg`.
        case editedCopy

        public static func < (a: Rule, b: Rule) -> Bool { a.rawValue < b.rawValue }
    }

    /// The sidecars found for one photo.
    public struct Match: Sendable, Equatable {
        /// The JSON sidecar's file name, if any.
        public var json: String?
        /// How the JSON sidecar's name was matched.
        public var jsonRule: Rule?
        /// Whether the JSON name carried Takeout's copy number (`IMG_1.jpg(1).json`).
        public var jsonNumbered: Bool
        /// The XMP sidecar's file name, if any.
        public var xmp: String?

        /// A match with the given sidecars.
        public init(json: String? = nil, jsonRule: Rule? = nil, jsonNumbered: Bool = false, xmp: String? = nil) {
            self.json = json
            self.jsonRule = jsonRule
            self.jsonNumbered = jsonNumbered
            self.xmp = xmp
        }
    }

    /// The length Takeout cuts a JSON sidecar's name to, before `.json`: names this long or
    /// longer may have been cut (46 is the usual cut; 47 is seen too).
    public static let takeoutNameLimit = 46
    /// The suffix of Takeout's newer sidecar names, before `.json`.
    public static let supplementalSuffix = ".supplemental-metadata"
    /// The suffixes Google Photos gives edited copies, in the languages Takeout is exported in.
    public static let editedSuffixes = ["-edited", "-bearbeitet", "-modifié", "-editado", "-modificato",
                                        "-bewerkt", "-redigerad", "-muokattu", "-edytowane", "-編集済み"]

    /// Whether a file name is a sidecar's (`.json` or `.xmp`, any case) rather than a photo's.
    public static func isSidecarName(_ name: String) -> Bool {
        let lower = name.lowercased()
        return lower.hasSuffix(".json") || lower.hasSuffix(".xmp")
    }

    /// The sidecars of each photo among `files` (the names of one folder). Photos without any
    /// sidecar are absent from the result. Costs a few dictionary lookups per photo, whatever
    /// the folder's size.
    public static func match(photos: [String], sidecars files: [String]) -> [String: Match] {
        let index = JSONIndex(files.filter { $0.lowercased().hasSuffix(".json") })
        let xmpFiles = Set(files.filter { $0.lowercased().hasSuffix(".xmp") })
        var result: [String: Match] = [:]

        // Every (photo, json) pair a rule allows, closest first; then greedy assignment.
        var pairs: [(rank: Int, photo: String, json: String, rule: Rule, numbered: Bool)] = []
        for photo in photos {
            for candidate in index.candidates(photo: photo) {
                pairs.append((candidate.rule.rawValue * 2 + (candidate.numbered ? 1 : 0), photo, candidate.json,
                              candidate.rule, candidate.numbered))
            }
        }
        pairs.sort { ($0.rank, $0.photo, $0.json) < ($1.rank, $1.photo, $1.json) }
        var taken: Set<String> = []
        for pair in pairs where result[pair.photo] == nil && !taken.contains(pair.json) {
            taken.insert(pair.json)
            result[pair.photo] = Match(json: pair.json, jsonRule: pair.rule, jsonNumbered: pair.numbered)
        }

        // Edited copies share their original's JSON (never claiming it).
        let photoSet = Set(photos)
        for photo in photos where result[photo] == nil {
            guard let original = uneditedName(photo) else { continue }
            let shared = photoSet.contains(original) ? result[original]?.json
                : index.candidates(photo: original).min { ($0.rule, $0.json) < ($1.rule, $1.json) }?.json
            if let shared {
                result[photo] = Match(json: shared, jsonRule: .editedCopy)
            }
        }

        for photo in photos {
            guard let xmp = xmpName(photo: photo, among: xmpFiles) else { continue }
            result[photo, default: Match()].xmp = xmp
        }
        return result
    }

    /// The rule by which `json` may be the sidecar of `photo`, and whether Takeout's copy number
    /// was involved; nil when it may not.
    static func jsonRule(photo: String, json: String) -> (Rule, Bool)? {
        JSONIndex([json]).candidates(photo: photo).min { ($0.rule, $0.numbered ? 1 : 0) < ($1.rule, $1.numbered ? 1 : 0) }
            .map { ($0.rule, $0.numbered) }
    }

    /// The JSON files of a folder by their name without `.json` (and without a copy number).
    private struct JSONIndex {
        private var byBase: [String: [(json: String, number: Int?)]] = [:]

        init(_ jsonFiles: [String]) {
            for json in jsonFiles where json.lowercased().hasSuffix(".json") {
                for base in interpretations(ofJSONBase: String(json.dropLast(".json".count))) {
                    byBase[base.name, default: []].append((json, base.number))
                }
            }
        }

        /// The JSON files a rule allows for `photo`.
        func candidates(photo: String) -> [(json: String, rule: Rule, numbered: Bool)] {
            var found: [(json: String, rule: Rule, numbered: Bool)] = []
            for name in interpretations(ofPhoto: photo) {
                func look(_ base: String, _ rule: Rule) {
                    for entry in byBase[base] ?? [] where entry.number == name.number {
                        found.append((entry.json, rule, name.number != nil))
                    }
                }
                look(name.name, .exact)
                let supplemental = Array(supplementalSuffix)
                for length in 1...supplemental.count {
                    look(name.name + String(supplemental[..<length]), .supplemental)
                }
                var prefix = ""
                for character in name.name.dropLast() {
                    prefix.append(character)
                    if prefix.count >= takeoutNameLimit || prefix.utf8.count >= takeoutNameLimit {
                        look(prefix, .truncated)
                    }
                }
                let stem = (name.name as NSString).deletingPathExtension
                if !stem.isEmpty, stem != name.name { look(stem, .withoutExtension) }
            }
            return found
        }
    }

    /// A photo's name as written, and, for `IMG_1(1).jpg`, as Takeout's copy 1 of `IMG_1.jpg`.
    private static func interpretations(ofPhoto photo: String) -> [(name: String, number: Int?)] {
        var names: [(String, Int?)] = [(photo, nil)]
        let ns = photo as NSString
        let ext = ns.pathExtension
        let stem = ns.deletingPathExtension
        if let (plain, number) = splitCopyNumber(stem) {
            names.append((ext.isEmpty ? plain : plain + "." + ext, number))
        }
        return names
    }

    /// A JSON name (without `.json`) as written, and, for `IMG_1.jpg(1)`, as copy 1 of `IMG_1.jpg`.
    private static func interpretations(ofJSONBase base: String) -> [(name: String, number: Int?)] {
        var names: [(String, Int?)] = [(base, nil)]
        if let (plain, number) = splitCopyNumber(base) { names.append((plain, number)) }
        return names
    }

    /// `IMG_1(12)` is `IMG_1` and 12; nil when the text does not end in a parenthesised number.
    private static func splitCopyNumber(_ text: String) -> (String, Int)? {
        guard text.hasSuffix(")"), let open = text.lastIndex(of: "(") else { return nil }
        let digits = text[text.index(after: open)..<text.index(before: text.endIndex)]
        guard !digits.isEmpty, digits.count <= 4, digits.allSatisfy(\.isASCII), let number = Int(digits) else { return nil }
        let plain = String(text[..<open])
        return plain.isEmpty ? nil : (plain, number)
    }

    /// `IMG_1-edited.jpg` is an edited copy of `IMG_1.jpg`; nil for a name without such a suffix.
    static func uneditedName(_ photo: String) -> String? {
        let ns = photo as NSString
        let ext = ns.pathExtension
        let stem = ns.deletingPathExtension
        for suffix in editedSuffixes where stem.count > suffix.count && stem.lowercased().hasSuffix(suffix) {
            let plain = String(stem.dropLast(suffix.count))
            return ext.isEmpty ? plain : plain + "." + ext
        }
        return nil
    }

    /// The XMP sidecar of a photo: `IMG_1.jpg.xmp`, else `IMG_1.xmp` (any case of `.xmp`).
    private static func xmpName(photo: String, among xmpFiles: Set<String>) -> String? {
        let stem = (photo as NSString).deletingPathExtension
        for base in [photo, stem] where !base.isEmpty {
            for ext in [".xmp", ".XMP", ".Xmp"] where xmpFiles.contains(base + ext) {
                return base + ext
            }
        }
        return nil
    }
}
