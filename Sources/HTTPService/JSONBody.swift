import Foundation
import Hummingbird
import Operations
import JSONValues

/// JSON answers, encoded as the command line's `--json` output is (snake_case keys, ISO 8601
/// dates), compact.
enum JSONBody {
    /// A JSON response of `value`.
    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        let encoder = StableJSON.encoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // The values encoded are plain records: encoding them cannot fail, but the answer is an
        // error body rather than a crash should it ever.
        let data = (try? encoder.encode(value)) ?? Data(#"{"error": "the answer could not be encoded as JSON"}"#.utf8)
        var headers = headers
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
