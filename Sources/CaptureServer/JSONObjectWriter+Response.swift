import HTTPTypes
import Hummingbird
import Tokenizer

extension JSONObjectWriter {
    /// A response carrying the object.
    consuming func response(status: HTTPResponse.Status) -> Response {
        APIJSON.response(status, finish())
    }
}
