/// A list of the API as one sequence, newest first: each page is fetched when the one before is
/// used up, after the last object seen (`starting_after`), until the API says there is no more
/// (`has_more` false). A failed page ends the iteration with its ``CaptureError``.
///
/// ```swift
/// for try await transaction in capture.transactions() { print(transaction.id) }
/// ```
public struct Pages<Element: Sendable>: AsyncSequence, Sendable {
    /// One page: its objects, and whether more follow.
    public struct Page: Sendable {
        public let objects: [Element]
        public let hasMore: Bool

        public init(objects: [Element], hasMore: Bool) {
            self.objects = objects
            self.hasMore = hasMore
        }
    }

    let fetch: @Sendable (_ startingAfter: String?) async throws(CaptureError) -> Page
    let id: @Sendable (Element) -> String

    /// A sequence of the pages `fetch` reads: given nil it reads the first, else the page
    /// after the object whose id it is given; `id` says an object's id.
    public init(
        id: @escaping @Sendable (Element) -> String,
        fetch: @escaping @Sendable (_ startingAfter: String?) async throws(CaptureError) -> Page
    ) {
        self.id = id
        self.fetch = fetch
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let pages: Pages
        var buffered: [Element] = []
        var cursor: String?
        var finished = false

        public mutating func next() async throws(CaptureError) -> Element? {
            while buffered.isEmpty {
                if finished { return nil }
                let page = try await pages.fetch(cursor)
                // A page that says more follow but holds nothing would never end.
                finished = !page.hasMore || page.objects.isEmpty
                cursor = page.objects.last.map(pages.id) ?? cursor
                buffered = page.objects.reversed()
            }
            return buffered.popLast()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(pages: self) }
}

extension CaptureClient {
    /// The merchant's transactions, newest first; `client`'s alone when given.
    public func transactions(client: String? = nil, pageSize: Int = 100) -> Pages<Components.Schemas.Transaction> {
        Pages(id: \.id) { after throws(CaptureError) in
            let page = try await call {
                try await $0.listTransactions(query: .init(client: client, limit: pageSize, startingAfter: after)).ok.body.json
            }
            return .init(objects: page.data, hasMore: page.hasMore)
        }
    }

    /// The events kept (the retention period), newest first.
    public func events(pageSize: Int = 100) -> Pages<Components.Schemas.Event> {
        Pages(id: \.id) { after throws(CaptureError) in
            let page = try await call { try await $0.listEvents(query: .init(limit: pageSize, startingAfter: after)).ok.body.json }
            return .init(objects: page.data, hasMore: page.hasMore)
        }
    }

    /// The merchant's checkout sessions, newest first.
    public func checkoutSessions(pageSize: Int = 100) -> Pages<Components.Schemas.CheckoutSession> {
        Pages(id: \.id) { after throws(CaptureError) in
            let page = try await call {
                try await $0.listCheckoutSessions(query: .init(limit: pageSize, startingAfter: after)).ok.body.json
            }
            return .init(objects: page.data, hasMore: page.hasMore)
        }
    }

    /// A client's saved cards, newest first.
    public func paymentMethods(of client: String, pageSize: Int = 100) -> Pages<Components.Schemas.PaymentMethod> {
        Pages(id: \.id) { after throws(CaptureError) in
            let page = try await call {
                try await $0.listPaymentMethods(path: .init(id: client), query: .init(limit: pageSize, startingAfter: after)).ok.body.json
            }
            return .init(objects: page.data, hasMore: page.hasMore)
        }
    }
}
