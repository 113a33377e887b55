import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// The XML S3 answers with, read with Foundation's `XMLParser` into a small tree: error bodies,
/// ListObjectsV2 pages, and the multipart upload's answers. External entities are never resolved.
enum S3XML {
    /// An element: its name (without a namespace prefix), its text, its children.
    final class Element {
        let name: String
        var text = ""
        var children: [Element] = []

        init(name: String) { self.name = name }

        /// The first child of that name.
        func child(_ name: String) -> Element? { children.first { $0.name == name } }
        /// Every child of that name.
        func all(_ name: String) -> [Element] { children.filter { $0.name == name } }
        /// The text of the first child of that name.
        func value(_ name: String) -> String? { child(name)?.text }
    }

    /// Why a body is not the XML expected.
    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    /// The root element of `data`.
    static func parse(_ data: [UInt8]) throws(Malformed) -> Element {
        let builder = TreeBuilder()
        let parser = XMLParser(data: Data(data))
        parser.shouldResolveExternalEntities = false
        parser.shouldProcessNamespaces = false
        parser.delegate = builder
        guard parser.parse(), let root = builder.root else {
            let reason = parser.parserError.map { "\($0.localizedDescription)" } ?? "no root element"
            throw Malformed(description: "not XML (\(reason))")
        }
        return root
    }

    private final class TreeBuilder: NSObject, XMLParserDelegate {
        var root: Element?
        var stack: [Element] = []

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                    qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
            let name = elementName.split(separator: ":").last.map(String.init) ?? elementName
            let element = Element(name: name)
            if let parent = stack.last { parent.children.append(element) } else if root == nil { root = element }
            stack.append(element)
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
            _ = stack.popLast()
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            stack.last?.text += string
        }

        func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
            stack.last?.text += String(decoding: CDATABlock, as: UTF8.self)
        }
    }

    // MARK: - Answers

    /// S3's error body: `<Error><Code>…</Code><Message>…</Message><RequestId>…</RequestId></Error>`.
    /// Only these three are kept: the body of a `SignatureDoesNotMatch` also carries the string
    /// to sign and the canonical request, which have no place in a log line.
    struct ErrorBody: Equatable {
        var code: String?
        var message: String?
        var requestId: String?
    }

    /// The error in `data`, or nil when it is not an S3 error document.
    static func errorBody(_ data: [UInt8]) -> ErrorBody? {
        guard !data.isEmpty, let root = try? parse(data), root.name == "Error" else { return nil }
        func trimmed(_ name: String) -> String? {
            guard let text = root.value(name)?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else { return nil }
            return text
        }
        return ErrorBody(code: trimmed("Code"), message: trimmed("Message"), requestId: trimmed("RequestId"))
    }

    /// A `ListBucketResult` of ListObjectsV2.
    static func listPage(_ data: [UInt8]) throws(Malformed) -> ListPage {
        let root = try parse(data)
        guard root.name == "ListBucketResult" else { throw Malformed(description: "expected ListBucketResult, got \(root.name)") }
        var objects: [ListedObject] = []
        for content in root.all("Contents") {
            guard let key = content.value("Key") else { throw Malformed(description: "a Contents element without a Key") }
            guard let size = content.value("Size").flatMap({ Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) else {
                throw Malformed(description: "the object \(key) has no readable Size")
            }
            objects.append(ListedObject(
                key: key, size: size, etag: ContentDigest.normalizedETag(content.value("ETag") ?? ""),
                lastModified: content.value("LastModified").flatMap { UTCCalendar.parseISO8601($0.trimmingCharacters(in: .whitespaces)) }))
        }
        let prefixes = root.all("CommonPrefixes").compactMap { $0.value("Prefix") }
        let truncated = root.value("IsTruncated")?.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() == "true"
        let token = root.value("NextContinuationToken").flatMap { $0.isEmpty ? nil : $0 }
        if truncated, token == nil { throw Malformed(description: "IsTruncated is true but there is no NextContinuationToken") }
        return ListPage(objects: objects, commonPrefixes: prefixes, isTruncated: truncated, nextContinuationToken: token)
    }

    /// One page of a `ListMultipartUploadsResult`: the uploads, and the markers of the next page
    /// when it is truncated.
    static func unfinishedUploads(_ data: [UInt8]) throws(Malformed) -> (uploads: [UnfinishedUpload], next: (key: String, uploadId: String)?) {
        let root = try parse(data)
        guard root.name == "ListMultipartUploadsResult" else { throw Malformed(description: "expected ListMultipartUploadsResult, got \(root.name)") }
        var uploads: [UnfinishedUpload] = []
        for upload in root.all("Upload") {
            guard let key = upload.value("Key"), let id = upload.value("UploadId")?.trimmingCharacters(in: .whitespacesAndNewlines), !id.isEmpty else {
                throw Malformed(description: "an Upload without its Key or UploadId")
            }
            uploads.append(UnfinishedUpload(key: key, uploadId: id,
                                            initiated: upload.value("Initiated").flatMap { UTCCalendar.parseISO8601($0.trimmingCharacters(in: .whitespaces)) }))
        }
        guard root.value("IsTruncated")?.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() == "true" else { return (uploads, nil) }
        guard let key = root.value("NextKeyMarker"), !key.isEmpty else {
            throw Malformed(description: "IsTruncated is true but there is no NextKeyMarker")
        }
        return (uploads, (key, root.value("NextUploadIdMarker") ?? ""))
    }

    /// The `UploadId` of an `InitiateMultipartUploadResult`.
    static func uploadId(_ data: [UInt8]) throws(Malformed) -> String {
        let root = try parse(data)
        guard root.name == "InitiateMultipartUploadResult",
              let id = root.value("UploadId")?.trimmingCharacters(in: .whitespacesAndNewlines), !id.isEmpty
        else { throw Malformed(description: "no UploadId in the answer to CreateMultipartUpload") }
        return id
    }

    /// What CompleteMultipartUpload answered. S3 may answer 200 and still fail: the body is then
    /// an `Error` document, which this returns as `.failure`.
    static func completion(_ data: [UInt8]) throws(Malformed) -> Result<String, ErrorBody> {
        let root = try parse(data)
        switch root.name {
        case "CompleteMultipartUploadResult":
            return .success(ContentDigest.normalizedETag(root.value("ETag") ?? ""))
        case "Error":
            return .failure(errorBody(data) ?? ErrorBody())
        default:
            throw Malformed(description: "expected CompleteMultipartUploadResult, got \(root.name)")
        }
    }

    /// The body of CompleteMultipartUpload: every part's number and ETag, in order.
    static func completeMultipartBody(parts: [(number: Int, etag: String)]) -> String {
        var xml = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        for part in parts {
            xml += "<Part><PartNumber>\(part.number)</PartNumber><ETag>\"\(escape(part.etag))\"</ETag></Part>"
        }
        return xml + "</CompleteMultipartUpload>"
    }

    /// `text` with XML's five special characters escaped.
    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(character)
            }
        }
        return out
    }
}

extension S3XML.ErrorBody: Error {}
