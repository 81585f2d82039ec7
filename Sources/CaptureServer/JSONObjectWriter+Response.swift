import HTTPTypes
import Hummingbird
import NIOCore
import Tokenizer

extension JSONObjectWriter {
    /// A response carrying the object.
    consuming func response(status: HTTPResponse.Status) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: finish())))
    }
}
