import Testing
@testable import Multipart

@Suite("multipart/form-data")
struct MultipartFormTests {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func readsFieldsAndAFileWithBinaryContent() throws {
        let binary: [UInt8] = [0xFF, 0xD8, 0xFF, 0x0D, 0x0A, 0x2D, 0x2D, 0x00, 0xFF, 0xD9]
        let body = bytes("preamble\r\n--XyZ\r\nContent-Disposition: form-data; name=\"author_id\"\r\n\r\nalice\r\n")
            + bytes("--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a b.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n")
            + binary + bytes("\r\n--XyZ--\r\nepilogue")
        let form = try MultipartForm(body: body, boundary: "XyZ")
        #expect(form.parts.count == 2)
        #expect(form.part(named: "author_id")?.content == bytes("alice"))
        let file = try #require(form.part(named: "file"))
        #expect(file.fileName == "a b.jpg")
        #expect(file.contentType == "image/jpeg")
        #expect(file.content == binary)
    }

    @Test func anEmptyPartAndAnEmptyFormAreFine() throws {
        let form = try MultipartForm(body: bytes("--b\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\n\r\n--b--\r\n"), boundary: "b")
        #expect(form.parts == [MultipartForm.Part(name: "title", fileName: nil, contentType: nil, content: [])])
        #expect(try MultipartForm(body: bytes("--b--\r\n"), boundary: "b").parts.isEmpty)
    }

    @Test func theBoundaryComesFromTheContentType() throws {
        #expect(try MultipartForm.boundary(contentType: "multipart/form-data; boundary=abc") == "abc")
        #expect(try MultipartForm.boundary(contentType: "Multipart/Form-Data ; charset=utf-8; Boundary=\"a b\"") == "a b")
        #expect(try MultipartForm.boundary(contentType: "image/jpeg") == nil)
        #expect(try MultipartForm.boundary(contentType: nil) == nil)
        #expect(throws: MultipartForm.Problem.noBoundary) { try MultipartForm.boundary(contentType: "multipart/form-data") }
        #expect(throws: MultipartForm.Problem.noBoundary) { try MultipartForm.boundary(contentType: "multipart/form-data; boundary=") }
    }

    @Test(arguments: [
        ("no boundary at all", "just bytes"),
        ("a part never closed", "--b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\nvalue"),
        ("no blank line", "--b\r\nContent-Disposition: form-data; name=\"x\"\r\n--b--"),
        ("a part without a name", "--b\r\nContent-Disposition: form-data\r\n\r\nvalue\r\n--b--"),
    ])
    func malformedBodiesAreRefusedWithAReason(_ case: (String, String)) {
        #expect(throws: MultipartForm.Problem.self, "\(`case`.0)") { try MultipartForm(body: bytes(`case`.1), boundary: "b") }
    }

    @Test func aFloodOfPartsIsRefusedWhileItStreamsInNotAfter() throws {
        var stream = MultipartStream(boundary: "b")
        let part = bytes("--b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\n\r\n")
        var fed = 0
        var refusal: MultipartForm.Problem?
        // Up to 64 MB of empty parts, 1 KB at a time, as a socket would deliver them.
        let chunk = Array((0..<(1024 / part.count + 1)).flatMap { _ in part })
        while fed < 64 << 20, refusal == nil {
            do {
                try stream.feed(chunk) { _ in }
                fed += chunk.count
            } catch let problem as MultipartForm.Problem {
                refusal = problem
            }
        }
        #expect(refusal == .tooMany("more than 16 parts"))
        #expect(fed < 4096, "refused after \(fed) bytes")
    }

    @Test func partsSplitAcrossChunksAtEveryPointReadTheSame() throws {
        let body = bytes("--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\none\r\n--XyZ\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n")
            + [0x0D, 0x0A, 0x2D, 0x2D, 0x58, 0x79, 0x00] + bytes("\r\n--XyZ--\r\n")
        let whole = try MultipartForm(body: body, boundary: "XyZ")
        #expect(whole.parts.map(\.name) == ["a", "file"])
        #expect(whole.part(named: "file")?.content == [0x0D, 0x0A, 0x2D, 0x2D, 0x58, 0x79, 0x00])
        for split in 1..<body.count {
            var stream = MultipartStream(boundary: "XyZ")
            var contents: [[UInt8]] = []
            let handle: (MultipartStream.Event) -> Void = { event in
                switch event {
                case .partStarted: contents.append([])
                case .content(let bytes): contents[contents.count - 1] += bytes
                case .partEnded: break
                }
            }
            try stream.feed(body[..<split], handle)
            try stream.feed(body[split...], handle)
            try stream.finish()
            #expect(contents == whole.parts.map(\.content), "split at \(split)")
        }
    }
}
