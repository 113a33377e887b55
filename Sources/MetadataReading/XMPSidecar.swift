import Foundation

/// What an XMP sidecar (`IMG_1.xmp`, `IMG_1.jpg.xmp`, as Lightroom, darktable, digiKam and
/// Capture One write them) says about when and where a photo was taken.
///
/// Read: `exif:DateTimeOriginal` (else `photoshop:DateCreated`, else `xmp:CreateDate`),
/// `exif:GPSLatitude` and `exif:GPSLongitude` in XMP's `DDD,MM.mmmmN` or `DDD,MM,SSN` forms or
/// as decimal degrees, `exif:GPSAltitude` (a rational, `35/1`) with `exif:GPSAltitudeRef`.
/// Properties may be attributes of `rdf:Description` or elements; prefixes are resolved through
/// their namespace declarations, so `<e:GPSLatitude>` works when `e` names the EXIF namespace.
/// Nothing is fetched and no entity is expanded: the file is scanned, not interpreted.
public struct XMPSidecar: Sendable, Equatable {
    /// The capture time as ISO 8601 text for a Darkroom sidecar's `taken_at`, when usable.
    public var takenAt: String?
    /// The property the time came from (`exif:DateTimeOriginal`, ...).
    public var timeProperty: String?
    /// Degrees north, when both coordinates are usable.
    public var latitude: Double?
    /// Degrees east, when both coordinates are usable.
    public var longitude: Double?
    /// Metres above sea level (negative below), when given.
    public var altitude: Double?
    /// Values that were present but unusable, one line each.
    public var problems: [String] = []

    static let exifNamespace = "http://ns.adobe.com/exif/1.0/"
    static let photoshopNamespace = "http://ns.adobe.com/photoshop/1.0/"
    static let xmpNamespace = "http://ns.adobe.com/xap/1.0/"

    /// Reads an XMP packet. Never throws: what cannot be read is absent, and said in `problems`.
    public init(bytes: [UInt8]) {
        let properties = XMPScanner(bytes).properties()
        let times = [(Self.exifNamespace, "DateTimeOriginal", "exif:DateTimeOriginal"),
                     (Self.photoshopNamespace, "DateCreated", "photoshop:DateCreated"),
                     (Self.xmpNamespace, "CreateDate", "xmp:CreateDate")]
        for (namespace, name, label) in times {
            guard let text = properties[XMPScanner.Key(namespace: namespace, name: name)] else { continue }
            if let iso = Self.isoDate(text) {
                takenAt = iso
                timeProperty = label
                break
            }
            problems.append("\(label) \"\(text)\" is not a date and time")
        }
        let latitudeText = properties[XMPScanner.Key(namespace: Self.exifNamespace, name: "GPSLatitude")]
        let longitudeText = properties[XMPScanner.Key(namespace: Self.exifNamespace, name: "GPSLongitude")]
        if let latitudeText, let longitudeText {
            let latitude = Self.coordinate(latitudeText, positive: "N", negative: "S", limit: 90)
            let longitude = Self.coordinate(longitudeText, positive: "E", negative: "W", limit: 180)
            if latitude == nil { problems.append("exif:GPSLatitude \"\(latitudeText)\" is not a latitude") }
            if longitude == nil { problems.append("exif:GPSLongitude \"\(longitudeText)\" is not a longitude") }
            if let latitude, let longitude {
                if latitude == 0 && longitude == 0 {
                    problems.append("exif:GPSLatitude/GPSLongitude are exactly 0, 0 (a GPS without a fix); no location")
                } else {
                    self.latitude = latitude
                    self.longitude = longitude
                }
            }
        } else if latitudeText != nil || longitudeText != nil {
            problems.append("exif:GPS\(latitudeText == nil ? "Latitude" : "Longitude") missing; no location")
        }
        if self.latitude != nil, let text = properties[XMPScanner.Key(namespace: Self.exifNamespace, name: "GPSAltitude")] {
            if let value = Self.rational(text) {
                let below = properties[XMPScanner.Key(namespace: Self.exifNamespace, name: "GPSAltitudeRef")]?
                    .trimmingCharacters(in: .whitespaces) == "1"
                altitude = below ? -abs(value) : value
            } else {
                problems.append("exif:GPSAltitude \"\(text)\" is not a number")
            }
        }
    }

    /// A coordinate in any XMP form: `DDD,MM.mmmmK`, `DDD,MM,SSK` (K the hemisphere letter), or
    /// decimal degrees with a sign or a trailing letter. Nil when it is none of them or out of range.
    static func coordinate(_ raw: String, positive: Character, negative: Character, limit: Double) -> Double? {
        var text = raw.trimmingCharacters(in: .whitespaces)
        var sign = 1.0
        if let last = text.last, last.isLetter {
            switch last.uppercased() {
            case String(positive): sign = 1
            case String(negative): sign = -1
            default: return nil
            }
            text.removeLast()
            text = text.trimmingCharacters(in: .whitespaces)
        }
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard (1...3).contains(parts.count), parts.allSatisfy({ !$0.isEmpty }) else { return nil }
        let values = parts.compactMap { Double($0) }
        guard values.count == parts.count, values.allSatisfy(\.isFinite) else { return nil }
        var degrees: Double
        if values.count == 1 {
            degrees = values[0]
        } else {
            // Degrees and minutes (and seconds): none negative, minutes and seconds below 60.
            guard values.allSatisfy({ $0 >= 0 }), values.dropFirst().allSatisfy({ $0 < 60 }) else { return nil }
            degrees = values[0] + values[1] / 60 + (values.count == 3 ? values[2] / 3600 : 0)
        }
        if degrees < 0 {
            // A sign and a hemisphere letter together would be ambiguous.
            guard sign == 1, values.count == 1 else { return nil }
            sign = -1
            degrees = -degrees
        }
        guard degrees <= limit else { return nil }
        return sign * degrees
    }

    /// XMP date text as the ISO 8601 form a Darkroom sidecar's `taken_at` takes: `YYYY-MM-DDThh:mm`
    /// gains `:00` seconds, EXIF-style `YYYY:MM:DD hh:mm:ss` is rewritten; a date with no time of
    /// day, or anything else, is nil.
    static func isoDate(_ raw: String) -> String? {
        var scalars = Array(raw.trimmingCharacters(in: .whitespaces).unicodeScalars)
        // XMP may leave the seconds out (`2019-08-15T09:00+02:00`): they are :00.
        if scalars.count >= 16, scalars.count == 16 || scalars[16] != ":" {
            scalars.insert(contentsOf: ":00".unicodeScalars, at: 16)
        }
        let text = String(String.UnicodeScalarView(scalars))
        let (wall, offset) = LocalDateTime.parse(iso: text, years: Self.years)
        guard case .valid(let time) = wall else { return nil }
        switch offset {
        case .absent: return time.isoString
        case .valid(let seconds): return time.isoString + (seconds == 0 && text.hasSuffix("Z") ? "Z" : LocalDateTime.offsetString(seconds))
        case .invalid: return nil
        }
    }

    /// The years an XMP date may name; the sidecar's own checks narrow them.
    static let years = 1...9999

    /// `35/1`, `-12.5` or `7/2` as a number; nil for anything else or a zero denominator.
    static func rational(_ raw: String) -> Double? {
        let text = raw.trimmingCharacters(in: .whitespaces)
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count == 2, let numerator = Double(parts[0]), let denominator = Double(parts[1]), denominator != 0 {
            return numerator / denominator
        }
        guard parts.count == 1, let value = Double(text), value.isFinite else { return nil }
        return value
    }
}

/// Scans XML for the simple properties of XMP: attributes, and elements holding only text,
/// each keyed by its namespace URI and local name. The first value of each property wins.
struct XMPScanner {
    /// A property: its namespace URI and its local name.
    struct Key: Hashable {
        var namespace: String
        var name: String
    }

    private let bytes: [UInt8]

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    private struct Open {
        var key: Key?
        var namespaces: [String: String]
        var text: [UInt8] = []
        var hasChildren = false
    }

    func properties() -> [Key: String] {
        var found: [Key: String] = [:]
        var stack: [Open] = []
        var i = 0
        let n = bytes.count
        func starts(_ literal: String, at index: Int) -> Bool {
            let pattern = Array(literal.utf8)
            return index + pattern.count <= n && bytes[index..<(index + pattern.count)].elementsEqual(pattern)
        }
        func skip(past literal: String, from index: Int) -> Int {
            let pattern = Array(literal.utf8)
            var j = index
            while j + pattern.count <= n {
                if bytes[j..<(j + pattern.count)].elementsEqual(pattern) { return j + pattern.count }
                j += 1
            }
            return n
        }
        while i < n {
            guard bytes[i] == UInt8(ascii: "<") else {
                if !stack.isEmpty { stack[stack.count - 1].text.append(bytes[i]) }
                i += 1
                continue
            }
            if starts("<!--", at: i) { i = skip(past: "-->", from: i + 4); continue }
            if starts("<![CDATA[", at: i) {
                let end = skip(past: "]]>", from: i + 9)
                if !stack.isEmpty { stack[stack.count - 1].text += bytes[(i + 9)..<max(i + 9, end - 3)] }
                i = end
                continue
            }
            if starts("<?", at: i) { i = skip(past: "?>", from: i + 2); continue }
            if starts("<!", at: i) { i = skip(past: ">", from: i + 2); continue }
            if starts("</", at: i) {
                i = skip(past: ">", from: i + 2)
                guard let closed = stack.popLast() else { continue }
                if let key = closed.key, !closed.hasChildren, found[key] == nil {
                    let value = Self.decode(closed.text).trimmingCharacters(in: .whitespacesAndNewlines)
                    if !value.isEmpty { found[key] = value }
                }
                continue
            }
            // A start tag: its name, its attributes, and whether it closes itself.
            let end = tagEnd(from: i + 1)
            let (name, attributes, selfClosing) = parseTag(bytes[(i + 1)..<end])
            i = min(n, end + 1)
            var namespaces = stack.last?.namespaces ?? [:]
            for (attribute, value) in attributes {
                if attribute == "xmlns" { namespaces[""] = value }
                if attribute.hasPrefix("xmlns:") { namespaces[String(attribute.dropFirst(6))] = value }
            }
            for (attribute, value) in attributes where !attribute.hasPrefix("xmlns") {
                if let key = Self.resolve(attribute, namespaces, attribute: true), found[key] == nil, !value.isEmpty {
                    found[key] = value
                }
            }
            if !stack.isEmpty { stack[stack.count - 1].hasChildren = true }
            if !selfClosing {
                stack.append(Open(key: Self.resolve(name, namespaces, attribute: false), namespaces: namespaces))
            }
        }
        return found
    }

    /// The index of the `>` that ends the tag starting at `start`, outside quoted values.
    private func tagEnd(from start: Int) -> Int {
        var quote: UInt8?
        var j = start
        while j < bytes.count {
            let byte = bytes[j]
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: ">") {
                return j
            }
            j += 1
        }
        return bytes.count
    }

    private func parseTag(_ tag: ArraySlice<UInt8>) -> (String, [(String, String)], Bool) {
        var body = Array(tag)
        var selfClosing = false
        if body.last == UInt8(ascii: "/") {
            selfClosing = true
            body.removeLast()
        }
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        var j = 0
        while j < body.count, !isSpace(body[j]) { j += 1 }
        let name = String(decoding: body[0..<j], as: UTF8.self)
        var attributes: [(String, String)] = []
        while j < body.count {
            while j < body.count, isSpace(body[j]) { j += 1 }
            let nameStart = j
            while j < body.count, body[j] != UInt8(ascii: "="), !isSpace(body[j]) { j += 1 }
            let attribute = String(decoding: body[nameStart..<j], as: UTF8.self)
            while j < body.count, isSpace(body[j]) { j += 1 }
            guard j < body.count, body[j] == UInt8(ascii: "=") else {
                if attribute.isEmpty { j += 1 }
                continue
            }
            j += 1
            while j < body.count, isSpace(body[j]) { j += 1 }
            guard j < body.count, body[j] == UInt8(ascii: "\"") || body[j] == UInt8(ascii: "'") else { continue }
            let quote = body[j]
            j += 1
            let valueStart = j
            while j < body.count, body[j] != quote { j += 1 }
            attributes.append((attribute, Self.decode(body[valueStart..<min(j, body.count)])))
            j += 1
        }
        return (name, attributes, selfClosing)
    }

    /// A qualified name's namespace URI and local name; unprefixed attributes have no namespace.
    private static func resolve(_ qualified: String, _ namespaces: [String: String], attribute: Bool) -> Key? {
        guard let colon = qualified.firstIndex(of: ":") else {
            guard !attribute, let namespace = namespaces[""] else { return nil }
            return Key(namespace: namespace, name: qualified)
        }
        guard let namespace = namespaces[String(qualified[..<colon])] else { return nil }
        return Key(namespace: namespace, name: String(qualified[qualified.index(after: colon)...]))
    }

    /// Text with XML's character references and five named entities replaced.
    static func decode<C: Collection>(_ raw: C) -> String where C.Element == UInt8 {
        let text = String(decoding: raw, as: UTF8.self)
        guard text.contains("&") else { return text }
        var out = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            guard let semicolon = rest[amp...].firstIndex(of: ";"), rest.distance(from: amp, to: semicolon) <= 10 else {
                out += "&"
                rest = rest[rest.index(after: amp)...]
                continue
            }
            let entity = String(rest[rest.index(after: amp)..<semicolon])
            let named = ["lt": "<", "gt": ">", "amp": "&", "quot": "\"", "apos": "'"]
            if let value = named[entity] {
                out += value
            } else if entity.hasPrefix("#x") || entity.hasPrefix("#X"), let code = UInt32(entity.dropFirst(2), radix: 16),
                      let scalar = Unicode.Scalar(code) {
                out.unicodeScalars.append(scalar)
            } else if entity.hasPrefix("#"), let code = UInt32(entity.dropFirst()), let scalar = Unicode.Scalar(code) {
                out.unicodeScalars.append(scalar)
            } else {
                out += "&" + entity + ";"
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        return out + rest
    }
}
