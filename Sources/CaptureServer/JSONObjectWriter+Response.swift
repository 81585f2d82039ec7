import HTTPTypes
import Hummingbird
import Payments
import Tokenizer

/// A response body written straight to bytes (the token and transaction answers, the busiest
/// routes); it stays `Encodable` for the lists that hold it.
protocol WrittenJSONBody: Encodable, ResponseGenerator {
    func json() -> JSONObjectWriter
}

extension WrittenJSONBody {
    func response(from request: Request, context: some RequestContext) -> Response {
        json().response(status: .ok)
    }
}

extension JSONObjectWriter {
    /// A response carrying the object.
    consuming func response(status: HTTPResponse.Status) -> Response {
        APIJSON.response(status, finish())
    }
}
